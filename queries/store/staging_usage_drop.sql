-- Query: staging_usage_drop
-- Parameters: none.
DROP TABLE IF EXISTS temp.main.staging_usage;
