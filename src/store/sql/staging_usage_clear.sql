-- Query: staging_usage_clear — empties a page-loaded batch's staging once its page is committed.
-- Parameters: none.
DELETE FROM staging_usage;
