-- Query: table_columns (report output)
-- Parameters: $table VARCHAR, a TEMP table of this session. Its columns in order, with their types,
-- so that each writer formats a column by its type.
SELECT column_name, data_type
FROM duckdb_columns()
WHERE table_name = $table AND database_name = 'temp'
ORDER BY column_index;
