-- Query: usage_framework_sweep_unseen — as usage_program_sweep_unseen, for frameworks.
-- Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ, $by_org BOOLEAN,
--   $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
DELETE FROM usage_framework
WHERE granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
  AND framework_id NOT IN (SELECT id FROM seen_ids);
