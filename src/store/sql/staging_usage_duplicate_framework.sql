-- Query: staging_usage_duplicate_framework
-- Parameters: $ids VARCHAR[], the ids whose rows could repeat a key (bucketKeys.ts BucketKeys: no other
-- id can, so only their rows are grouped).
-- One bucket key of usage_framework (granularity is the batch's own) that a batch holds more than once: a framework on two
-- pages, or a bucket given twice. metric names the first metric given twice (NULL: a bucket's metrics
-- came in two parts: no duplicate, staging_usage_merge.sql folds them). No row: no duplicate.
SELECT framework_id, period_id, timeframe_start, metric, copies
FROM (
  SELECT s.framework_id, p.period_id, s.timeframe_start, count(*) AS copies,
         CASE
         WHEN count(s.compute_unit_seconds) > 1 THEN 'compute_unit_seconds'
         WHEN count(s.root_branch_bytes_month) > 1 THEN 'root_branch_bytes_month'
         WHEN count(s.child_branch_bytes_month) > 1 THEN 'child_branch_bytes_month'
         WHEN count(s.instant_restore_bytes_month) > 1 THEN 'instant_restore_bytes_month'
         WHEN count(s.public_network_transfer_bytes) > 1 THEN 'public_network_transfer_bytes'
         WHEN count(s.private_network_transfer_bytes) > 1 THEN 'private_network_transfer_bytes'
         END AS metric
  FROM staging_usage s JOIN staging_periods p ON p.period_local = s.period_local
  WHERE s.framework_id IN (SELECT unnest($ids))
  GROUP BY s.framework_id, p.period_id, s.timeframe_start
  HAVING count(*) > 1
)
ORDER BY metric IS NULL, copies DESC, framework_id, period_id, timeframe_start
LIMIT 1;
