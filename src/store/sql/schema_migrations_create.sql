-- Query: schema_migrations_create
-- Parameters: none. The migration runner's own book-keeping table (not part of any migration, so
-- that the runner can read it before applying 001).
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       VARCHAR NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL
);
