-- Query: usage_program_window_deletions — before a page-loaded batch replaces its window and scope: how
-- many values (rows of the usage_program view) they hold, and how many of those belong to programs that
-- no page returned (seen_ids), which the replacement would delete outright. The batch holds an answer
-- that would delete too large a share.
-- Parameters: $api_version VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
WITH b AS (
  SELECT program_id, count(compute_unit_seconds) + count(root_branch_bytes_month) + count(child_branch_bytes_month)
     + count(instant_restore_bytes_month) + count(public_network_transfer_bytes) + count(private_network_transfer_bytes)
     + count(extra_branches_month) + count(snapshot_storage_bytes_month) + count(active_time_seconds)
     + count(compute_time_seconds) + count(written_data_bytes) + count(synthetic_storage_size_bytes)
     + count(data_storage_bytes_hour) + count(logical_size_bytes) + count(logical_size_bytes_hour) AS n
  FROM usage_program_buckets
  WHERE api_version = $api_version AND granularity = $granularity
    AND timeframe_start >= $window_start AND timeframe_start < $window_end
    AND (NOT $by_org OR org_id = $org_id)
    AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
  GROUP BY program_id
)
SELECT coalesce(sum(n), 0) AS existing, coalesce(sum(n) FILTER (WHERE program_id NOT IN (SELECT id FROM seen_ids)), 0) AS unseen
FROM b;
