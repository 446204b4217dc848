-- Query: programs_mark_deleted
-- Parameters: $seen_at TIMESTAMPTZ, $org_ids VARCHAR[] (organizations whose listing was complete).
-- A program of those organizations that the listing no longer returned keeps its row, marked deleted
-- as of the first listing that missed it.
UPDATE programs
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE org_id IN (SELECT unnest($org_ids))
  AND deleted_at IS NULL
  AND program_id NOT IN (SELECT program_id FROM staging_programs);
