-- Query: run_ids (report input)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- The collection runs that wrote the usage rows a report reads.
SELECT DISTINCT run_id FROM (
  SELECT run_id FROM usage_program
  WHERE granularity = $granularity AND timeframe_start >= $range_start AND timeframe_start < $range_end
  UNION ALL
  SELECT run_id FROM usage_framework
  WHERE granularity = $granularity AND timeframe_start >= $range_start AND timeframe_start < $range_end
) ORDER BY run_id;
