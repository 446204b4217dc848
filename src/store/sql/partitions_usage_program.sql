-- Query: partitions_usage_program (export --dataset; run by src/store/dataset.ts)
-- Parameters: none. One row per partition of usage_program in the dataset (granularity x UTC month
-- of timeframe_start): its rows, an order-independent fingerprint of every column of every row
-- (count, xor and sum of row hashes), and the runs that wrote them.
SELECT granularity, strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month,
       count(*) AS n_rows,
       CAST(bit_xor(hash(u)) AS VARCHAR) || '-' || CAST(sum(CAST(hash(u) AS HUGEINT)) AS VARCHAR) AS digest,
       list(DISTINCT run_id ORDER BY run_id) AS run_ids
FROM usage_program u
GROUP BY ALL
ORDER BY ALL;
