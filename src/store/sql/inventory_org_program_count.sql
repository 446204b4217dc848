-- Query: inventory_org_program_count — how many programs the inventory knows in one organization; the
-- collector bounds a scope's page count by it. Parameters: $org_id VARCHAR.
SELECT count(*) AS n FROM programs WHERE org_id = $org_id;
