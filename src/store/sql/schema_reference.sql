-- Query: schema_reference — tables and views of the main schema with their columns and comments,
-- for docs/SCHEMA.md. Parameters: none.
SELECT t.kind, t.name, t.comment AS object_comment, c.column_index, c.column_name, c.data_type, c.is_nullable,
       c.comment AS column_comment
FROM (
  SELECT 'table' AS kind, table_name AS name, comment FROM duckdb_tables() WHERE schema_name = 'main' AND NOT internal AND NOT temporary
  UNION ALL
  SELECT 'view', view_name, comment FROM duckdb_views() WHERE schema_name = 'main' AND NOT internal AND NOT temporary
) t
JOIN duckdb_columns() c ON c.schema_name = 'main' AND c.table_name = t.name
WHERE t.name <> 'schema_migrations'
ORDER BY t.kind, t.name, c.column_index;
