-- Query: staging_usage_drop
-- Parameters: none. Drops a batch's staging tables.
DROP TABLE IF EXISTS temp.main.staging_usage;
DROP TABLE IF EXISTS temp.main.staging_periods;
DROP TABLE IF EXISTS temp.main.seen_ids;
