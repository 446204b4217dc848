-- Query: page_ids_other_org — one program of the page (page_ids) that the inventory places in another
-- organization than the batch's, if any: such a page does not belong in the scope's answer.
-- Parameters: $org_id VARCHAR.
SELECT p.id, i.org_id
FROM page_ids p JOIN programs i ON i.program_id = p.id
WHERE i.org_id IS NOT NULL AND i.org_id <> $org_id
LIMIT 1;
