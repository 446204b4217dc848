-- Query: usage_framework_window_has_rows — as usage_program_window_has_rows, for usage_framework.
-- Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ, $by_org BOOLEAN,
--   $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
SELECT EXISTS (
  SELECT 1 FROM usage_framework
  WHERE granularity = $granularity
    AND timeframe_start >= $window_start AND timeframe_start < $window_end
    AND (NOT $by_org OR org_id = $org_id)
    AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
) AS has_rows;
