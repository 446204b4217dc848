-- Query: usage_program_sweep_unseen — at the end of a page-loaded batch, removes the rows in its window
-- and scope of programs the complete fetch no longer returned: what no page replaced is gone.
-- Parameters: $api_version VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
DELETE FROM usage_program
WHERE api_version = $api_version AND granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
  AND program_id NOT IN (SELECT id FROM seen_ids);
