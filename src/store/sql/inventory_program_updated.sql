-- Query: inventory_program_updated
-- Parameters: $program_ids VARCHAR[], $updated_ats VARCHAR[] (ISO date-times or NULL, same order).
-- The updated_at each program had in the programs listing.
INSERT INTO inventory_program_updated (program_id, api_updated_at)
SELECT p.id, CAST(u.at AS TIMESTAMPTZ)
FROM (SELECT unnest($program_ids) AS id, generate_subscripts($program_ids, 1) AS i) p
JOIN (SELECT unnest($updated_ats) AS at, generate_subscripts($updated_ats, 1) AS i) u USING (i)
ON CONFLICT (program_id) DO UPDATE SET api_updated_at = excluded.api_updated_at;
