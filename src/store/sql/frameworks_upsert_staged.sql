-- Query: frameworks_upsert_staged
-- Parameters: $seen_at TIMESTAMPTZ. Every listed framework: inserted, or updated with last_seen_at
-- and deleted_at cleared. first_seen_at is kept. Nothing is deleted.
INSERT INTO frameworks (framework_id, program_id, name, current_state, created_at, first_seen_at, last_seen_at, deleted_at)
SELECT DISTINCT ON (framework_id) framework_id, program_id, name, current_state, created_at, $seen_at, $seen_at, NULL
FROM staging_frameworks
ORDER BY framework_id, seq DESC
ON CONFLICT (framework_id) DO UPDATE SET
  program_id    = excluded.program_id,
  name          = excluded.name,
  current_state = excluded.current_state,
  created_at    = coalesce(excluded.created_at, frameworks.created_at),
  last_seen_at  = excluded.last_seen_at,
  deleted_at    = NULL;
