-- Query: inventory_program_total
-- No parameters. Live programs the inventory knows: what a full programs listing would page through,
-- against which asking for a few unknown programs by id is weighed.
SELECT count(*) AS n FROM programs WHERE deleted_at IS NULL;
