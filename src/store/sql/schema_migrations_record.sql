-- Query: schema_migrations_record
-- Parameters: $version INTEGER, $name VARCHAR, $applied_at TIMESTAMPTZ.
-- Runs in the same transaction as the migration it records.
INSERT INTO schema_migrations (version, name, applied_at) VALUES ($version, $name, $applied_at);
