-- Query: staging_inventory_drop
-- Parameters: none. Drops the inventory staging tables of this connection, if any.
DROP TABLE IF EXISTS temp.main.staging_programs;
DROP TABLE IF EXISTS temp.main.staging_frameworks;
DROP TABLE IF EXISTS temp.main.staging_snapshots;
