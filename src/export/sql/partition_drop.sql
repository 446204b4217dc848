-- Query: partition_drop (export --dataset)
-- Parameters: none. The staged partition is not kept beyond the export.
DROP TABLE IF EXISTS temp.export_partition
