-- Query: partitions_spend_daily (export --dataset; run by src/store/dataset.ts)
-- Parameters: none. One partition per billing month of the priced daily lines (view spend_daily);
-- the fingerprint covers the prices too, so a new price book rewrites the months it changes. The
-- runs are those that wrote the month's usage rows.
WITH p AS (
  SELECT strftime(billing_month, '%Y-%m') AS month, count(*) AS n_rows,
         CAST(bit_xor(hash(d)) AS VARCHAR) || '-' || CAST(sum(CAST(hash(d) AS HUGEINT)) AS VARCHAR) AS digest
  FROM spend_daily d GROUP BY ALL
),
r AS (
  SELECT strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month, list(DISTINCT run_id ORDER BY run_id) AS run_ids
  FROM (SELECT timeframe_start, run_id FROM usage_program UNION ALL SELECT timeframe_start, run_id FROM usage_framework)
  GROUP BY ALL
)
SELECT p.month, p.n_rows, p.digest, coalesce(r.run_ids, []) AS run_ids
FROM p LEFT JOIN r USING (month)
ORDER BY p.month;
