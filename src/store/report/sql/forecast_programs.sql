-- Query: forecast_programs (forecast input)
-- Parameters: $cutoff_day VARCHAR (YYYY-MM-DD: complete days end there), $window_start_day VARCHAR
-- (YYYY-MM-DD: the trend window starts there). Reads rpt_daily (src/store/report/sql/daily_chunk.sql of the same run).
-- Spend per program in the three spans the forecast tells apart (before the trend window, inside it,
-- from the cutoff on), each dated by its first day: the forecast only sums a program's days by span,
-- so it gets the same figures from at most three rows per program as from one row per program and day.
SELECT program_id, any_value(coalesce(program_name, program_id)) AS program_name, min(usage_day) AS day,
  CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_daily
GROUP BY program_id, usage_day >= CAST($window_start_day AS DATE), usage_day >= CAST($cutoff_day AS DATE)
ORDER BY program_id, day;
