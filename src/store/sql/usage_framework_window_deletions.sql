-- Query: usage_framework_window_deletions — as usage_program_window_deletions, for usage_framework:
-- rows of frameworks that no page returned. Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
SELECT count(*) AS existing, count(*) FILTER (WHERE framework_id NOT IN (SELECT id FROM seen_ids)) AS unseen
FROM usage_framework
WHERE granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)));
