-- Query: programs_upsert_staged
-- Parameters: $seen_at TIMESTAMPTZ. Every listed program: inserted, or updated with last_seen_at and
-- deleted_at cleared (it is listed again). first_seen_at is kept. Nothing is deleted.
INSERT INTO programs (program_id, org_id, name, region_id, created_at, first_seen_at, last_seen_at, deleted_at)
SELECT DISTINCT ON (program_id) program_id, org_id, name, region_id, created_at, $seen_at, $seen_at, NULL
FROM staging_programs
ORDER BY program_id, seq DESC
ON CONFLICT (program_id) DO UPDATE SET
  org_id       = coalesce(excluded.org_id, programs.org_id),
  name         = excluded.name,
  region_id    = coalesce(excluded.region_id, programs.region_id),
  created_at   = coalesce(excluded.created_at, programs.created_at),
  last_seen_at = excluded.last_seen_at,
  deleted_at   = NULL;
