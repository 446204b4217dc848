-- Query: programs_mark_unseen
-- Parameters: $seen_at TIMESTAMPTZ (start of the completed listing), $org_ids VARCHAR[].
-- After a programs listing paged to its end (possibly over several runs), a program of those
-- organizations it did not return keeps its row, marked deleted as of that listing.
UPDATE programs
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE org_id IN (SELECT unnest($org_ids))
  AND deleted_at IS NULL
  AND last_seen_at < $seen_at;
