-- Query: exported_record (export --dataset)
-- Parameters: $dir, $partition, $fingerprint VARCHAR, $n_rows BIGINT, $sha256 VARCHAR, $exported_at TIMESTAMPTZ.
INSERT OR REPLACE INTO export_partitions VALUES ($dir, $partition, $fingerprint, $n_rows, $sha256, $exported_at)
