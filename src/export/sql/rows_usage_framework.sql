-- Query: rows_usage_framework (export --dataset)
-- Parameters: $granularity VARCHAR, $from TIMESTAMPTZ, $to TIMESTAMPTZ (the partition's UTC month).
SELECT * EXCLUDE (granularity) FROM usage_framework
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to
ORDER BY program_id, framework_id, period_id, timeframe_start, metric
