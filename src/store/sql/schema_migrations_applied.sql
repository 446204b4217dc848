-- Query: schema_migrations_applied
-- Parameters: none. The migrations already applied, in order.
SELECT version, name, applied_at FROM schema_migrations ORDER BY version;
