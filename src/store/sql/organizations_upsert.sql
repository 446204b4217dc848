-- Query: organizations_upsert (the organization listing of a collection)
-- Parameters: $org_id VARCHAR, $name VARCHAR (NULL when the listing gave none), $seen_at TIMESTAMPTZ.
INSERT INTO organizations (org_id, name, last_seen_at) VALUES ($org_id, $name, $seen_at)
ON CONFLICT (org_id) DO UPDATE SET name = coalesce(excluded.name, organizations.name), last_seen_at = excluded.last_seen_at;
