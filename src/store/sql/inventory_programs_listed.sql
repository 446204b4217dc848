-- Query: inventory_programs_listed
-- Parameters: $program_ids VARCHAR[], $kind VARCHAR, $listed_at TIMESTAMPTZ. Those programs' listings
-- of that kind were committed now, as of the updated_at the programs listing gave.
INSERT INTO inventory_listing_state (program_id, kind, listed_at, listed_updated_at)
SELECT p.id, $kind, $listed_at, pu.api_updated_at
FROM (SELECT unnest($program_ids) AS id) p
LEFT JOIN inventory_program_updated pu ON pu.program_id = p.id
ON CONFLICT (program_id, kind) DO UPDATE SET listed_at = excluded.listed_at, listed_updated_at = excluded.listed_updated_at;
