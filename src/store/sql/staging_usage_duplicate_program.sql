-- Query: staging_usage_duplicate_program
-- Parameters: $ids VARCHAR[], the ids whose rows could repeat a key (bucketKeys.ts BucketKeys: no other
-- id can, so only their rows are grouped).
-- One bucket key of usage_program (api_version and
-- granularity are the batch's own, so the key within a batch is the rest) that a batch holds more than once: a program on two
-- pages, or a bucket given twice. metric names the first metric given twice (NULL: a bucket's metrics
-- came in two parts: no duplicate, staging_usage_merge.sql folds them). No row: no duplicate.
SELECT program_id, period_id, timeframe_start, metric, copies
FROM (
  SELECT s.program_id, p.period_id, s.timeframe_start, count(*) AS copies,
         CASE
         WHEN count(s.compute_unit_seconds) > 1 THEN 'compute_unit_seconds'
         WHEN count(s.root_branch_bytes_month) > 1 THEN 'root_branch_bytes_month'
         WHEN count(s.child_branch_bytes_month) > 1 THEN 'child_branch_bytes_month'
         WHEN count(s.instant_restore_bytes_month) > 1 THEN 'instant_restore_bytes_month'
         WHEN count(s.public_network_transfer_bytes) > 1 THEN 'public_network_transfer_bytes'
         WHEN count(s.private_network_transfer_bytes) > 1 THEN 'private_network_transfer_bytes'
         WHEN count(s.extra_branches_month) > 1 THEN 'extra_branches_month'
         WHEN count(s.snapshot_storage_bytes_month) > 1 THEN 'snapshot_storage_bytes_month'
         WHEN count(s.active_time_seconds) > 1 THEN 'active_time_seconds'
         WHEN count(s.compute_time_seconds) > 1 THEN 'compute_time_seconds'
         WHEN count(s.written_data_bytes) > 1 THEN 'written_data_bytes'
         WHEN count(s.synthetic_storage_size_bytes) > 1 THEN 'synthetic_storage_size_bytes'
         WHEN count(s.data_storage_bytes_hour) > 1 THEN 'data_storage_bytes_hour'
         WHEN count(s.logical_size_bytes) > 1 THEN 'logical_size_bytes'
         WHEN count(s.logical_size_bytes_hour) > 1 THEN 'logical_size_bytes_hour'
         END AS metric
  FROM staging_usage s JOIN staging_periods p ON p.period_local = s.period_local
  WHERE s.program_id IN (SELECT unnest($ids))
  GROUP BY s.program_id, p.period_id, s.timeframe_start
  HAVING count(*) > 1
)
ORDER BY metric IS NULL, copies DESC, program_id, period_id, timeframe_start
LIMIT 1;
