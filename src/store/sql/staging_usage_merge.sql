-- Query: staging_usage_merge
-- Parameters: none. Folds the staged rows of a bucket that came in parts (its metrics on two pages or in
-- two append() calls, none of them twice: staging_usage_duplicate_*.sql found no metric given twice)
-- into one row (under one of the bucket's item numbers: items with the same ids are interchangeable).
-- Run only when such a bucket exists.
CREATE OR REPLACE TEMP TABLE staging_rows AS
SELECT min(item) AS item, period_local, timeframe_start, timeframe_end,
       max(compute_unit_seconds) AS compute_unit_seconds,
       max(root_branch_bytes_month) AS root_branch_bytes_month,
       max(child_branch_bytes_month) AS child_branch_bytes_month,
       max(instant_restore_bytes_month) AS instant_restore_bytes_month,
       max(public_network_transfer_bytes) AS public_network_transfer_bytes,
       max(private_network_transfer_bytes) AS private_network_transfer_bytes,
       max(extra_branches_month) AS extra_branches_month,
       max(snapshot_storage_bytes_month) AS snapshot_storage_bytes_month,
       max(active_time_seconds) AS active_time_seconds,
       max(compute_time_seconds) AS compute_time_seconds,
       max(written_data_bytes) AS written_data_bytes,
       max(synthetic_storage_size_bytes) AS synthetic_storage_size_bytes,
       max(data_storage_bytes_hour) AS data_storage_bytes_hour,
       max(logical_size_bytes) AS logical_size_bytes,
       max(logical_size_bytes_hour) AS logical_size_bytes_hour
FROM staging_rows JOIN staging_items USING (item)
GROUP BY org_id, program_id, framework_id, period_local, timeframe_start, timeframe_end;
