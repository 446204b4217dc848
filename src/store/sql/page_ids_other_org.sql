-- Query: page_ids_other_org — one program of a page that the inventory places in another organization
-- than the batch's, if any: such a page does not belong in the scope's answer.
-- Parameters: $ids VARCHAR[], $org_id VARCHAR.
SELECT i.program_id AS id, i.org_id
FROM programs i
WHERE i.program_id IN (SELECT unnest($ids::VARCHAR[]))
  AND i.org_id IS NOT NULL AND i.org_id <> $org_id
LIMIT 1;
