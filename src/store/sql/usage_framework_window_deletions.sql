-- Query: usage_framework_window_deletions — as usage_program_window_deletions, for usage_framework:
-- values of frameworks that no page returned. Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
WITH b AS (
  SELECT framework_id, count(compute_unit_seconds) + count(root_branch_bytes_month) + count(child_branch_bytes_month)
     + count(instant_restore_bytes_month) + count(public_network_transfer_bytes) + count(private_network_transfer_bytes) AS n
  FROM usage_framework_buckets
  WHERE granularity = $granularity
    AND timeframe_start >= $window_start AND timeframe_start < $window_end
    AND (NOT $by_org OR org_id = $org_id)
    AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
  GROUP BY framework_id
)
SELECT coalesce(sum(n), 0) AS existing, coalesce(sum(n) FILTER (WHERE framework_id NOT IN (SELECT id FROM seen_ids)), 0) AS unseen
FROM b;
