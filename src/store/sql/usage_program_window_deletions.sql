-- Query: usage_program_window_deletions — before a page-loaded batch replaces its window and scope: how
-- many rows they hold, and how many of those belong to programs that no page returned (seen_ids), which
-- the replacement would delete outright. The batch holds an answer that would delete too large a share.
-- Parameters: $api_version VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
SELECT count(*) AS existing, count(*) FILTER (WHERE program_id NOT IN (SELECT id FROM seen_ids)) AS unseen
FROM usage_program
WHERE api_version = $api_version AND granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)));
