-- Query: frameworks_mark_deleted
-- Parameters: $seen_at TIMESTAMPTZ, $program_ids VARCHAR[] (programs whose framework listing was complete).
UPDATE frameworks
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE program_id IN (SELECT unnest($program_ids))
  AND deleted_at IS NULL
  AND framework_id NOT IN (SELECT framework_id FROM staging_frameworks);
