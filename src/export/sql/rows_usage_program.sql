-- Query: rows_usage_program (export --dataset)
-- Parameters: $granularity VARCHAR, $from TIMESTAMPTZ, $to TIMESTAMPTZ (the partition's UTC month).
-- The partition's rows without the partition column (Hive layout: it is in the path), in key order.
SELECT * EXCLUDE (granularity) FROM usage_program
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to
ORDER BY api_version, program_id, period_id, timeframe_start, metric
