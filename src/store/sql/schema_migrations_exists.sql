-- Query: schema_migrations_exists
-- Parameters: none. 1 when the database already has the runner's table (read-only opens cannot create it).
SELECT count(*)::INTEGER AS n
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'schema_migrations';
