-- Query: partitions_usage_framework (export --dataset; run by src/store/dataset.ts)
-- Parameters: none. As partitions_usage_program.sql, for usage_framework.
SELECT granularity, strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month,
       count(*) AS n_rows,
       CAST(bit_xor(hash(u)) AS VARCHAR) || '-' || CAST(sum(CAST(hash(u) AS HUGEINT)) AS VARCHAR) AS digest,
       list(DISTINCT run_id ORDER BY run_id) AS run_ids
FROM usage_framework u
GROUP BY ALL
ORDER BY ALL;
