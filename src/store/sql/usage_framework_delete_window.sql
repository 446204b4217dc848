-- Query: usage_framework_delete_window
-- Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ (exclusive),
--   $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
-- Removes exactly the bucket rows a re-collected window and scope replaces (whatever their period).
DELETE FROM usage_framework_buckets
WHERE granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)));
