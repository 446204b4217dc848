-- Query: exported_forget (export --dataset)
-- Parameters: $dir VARCHAR, $partition VARCHAR. A partition that no longer has rows.
DELETE FROM export_partitions WHERE dataset_dir = $dir AND partition = $partition
