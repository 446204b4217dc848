-- Query: snapshots_mark_deleted
-- Parameters: $seen_at TIMESTAMPTZ, $program_ids VARCHAR[] (programs whose snapshot listing was complete).
UPDATE snapshots
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE program_id IN (SELECT unnest($program_ids))
  AND deleted_at IS NULL
  AND snapshot_id NOT IN (SELECT snapshot_id FROM staging_snapshots);
