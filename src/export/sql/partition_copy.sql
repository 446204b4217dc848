-- Query: partition_copy (export --dataset)
-- Parameters: none; {{path}} is the temporary file (quoted by quoteLiteral: COPY takes no parameter).
COPY export_partition TO {{path}} (FORMAT parquet, COMPRESSION zstd)
