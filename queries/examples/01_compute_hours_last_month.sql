-- Query: compute_hours_last_month — the five programs with the most compute last month (CU-hours).
-- Parameters: none. Runs as is against data/usage.analyst.duckdb.
SELECT program_id,
       round(sum(value) / 3600, 1) AS cu_hours
FROM usage_program
WHERE granularity = 'daily'
  AND metric = 'compute_unit_seconds'
  AND timeframe_start >= date_trunc('month', now()) - INTERVAL 1 MONTH
  AND timeframe_start < date_trunc('month', now())
GROUP BY ALL
ORDER BY cu_hours DESC
LIMIT 5;
