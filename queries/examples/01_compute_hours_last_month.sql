-- Query: compute_hours_last_month — the five programs with the most compute last month, legacy (v1)
-- and current (v2) alike: v2 reports compute_unit_seconds (CU-seconds), v1 compute_time_seconds
-- (seconds); the divisor to hours comes from the metric catalogue (price_metrics). Parameters: none.
SELECT u.program_id,
       u.api_version,
       any_value(m.billing_unit) AS unit,
       round(CAST(sum(u.value) AS DOUBLE) / CAST(any_value(m.divisor) AS DOUBLE), 1) AS compute_hours
FROM usage_program u
JOIN price_metrics m ON m.metric = u.metric
WHERE u.granularity = 'daily'
  AND u.metric IN ('compute_unit_seconds', 'compute_time_seconds')
  AND u.timeframe_start >= timezone('UTC', date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH)
  AND u.timeframe_start < timezone('UTC', date_trunc('month', timezone('UTC', now())))
GROUP BY u.program_id, u.api_version
ORDER BY compute_hours DESC, u.program_id
LIMIT 5;
