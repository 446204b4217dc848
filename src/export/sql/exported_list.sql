-- Query: exported_list (export --dataset)
-- Parameters: $dir VARCHAR (the dataset's absolute path). What the last exports wrote there.
SELECT partition, fingerprint FROM export_partitions WHERE dataset_dir = $dir
