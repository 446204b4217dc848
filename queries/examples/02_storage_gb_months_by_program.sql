-- Query: storage_gb_months_by_program — storage per program for the last complete month, in GB-months
-- (byte-month metrics / 1e9), from the monthly buckets. Parameters: none.
SELECT program_id,
       period_plan,
       round(sum(value) FILTER (WHERE metric = 'root_branch_bytes_month') / 1e9, 3)  AS root_gb_months,
       round(sum(value) FILTER (WHERE metric = 'child_branch_bytes_month') / 1e9, 3) AS child_gb_months,
       round(sum(value) FILTER (WHERE metric = 'snapshot_storage_bytes_month') / 1e9, 3) AS snapshot_gb_months
FROM usage_program
WHERE api_version = 'v2'
  AND granularity = 'monthly'
  AND timeframe_start = date_trunc('month', now()) - INTERVAL 1 MONTH
GROUP BY ALL
ORDER BY root_gb_months DESC NULLS LAST;
