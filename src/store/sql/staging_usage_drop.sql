-- Query: staging_usage_drop
-- Parameters: none. Drops a batch's staging table and its last parsed page.
DROP TABLE IF EXISTS temp.main.staging_usage;
DROP TABLE IF EXISTS temp.main.page;
DROP TABLE IF EXISTS temp.main.seen_ids;
