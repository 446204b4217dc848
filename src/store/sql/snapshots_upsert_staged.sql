-- Query: snapshots_upsert_staged
-- Parameters: $seen_at TIMESTAMPTZ. Every listed snapshot: inserted, or updated with last_seen_at
-- and deleted_at cleared. first_seen_at is kept. Nothing is deleted.
INSERT INTO snapshots (snapshot_id, program_id, name, source_framework_id, created_at, manual, expires_at,
                       first_seen_at, last_seen_at, deleted_at)
SELECT DISTINCT ON (snapshot_id) snapshot_id, program_id, name, source_framework_id, created_at, manual, expires_at,
       $seen_at, $seen_at, NULL
FROM staging_snapshots
ORDER BY snapshot_id, seq DESC
ON CONFLICT (snapshot_id) DO UPDATE SET
  program_id          = excluded.program_id,
  name                = excluded.name,
  source_framework_id = excluded.source_framework_id,
  created_at          = coalesce(excluded.created_at, snapshots.created_at),
  manual              = excluded.manual,
  expires_at          = excluded.expires_at,
  last_seen_at        = excluded.last_seen_at,
  deleted_at          = NULL;
