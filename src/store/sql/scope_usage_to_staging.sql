-- Query: scope_usage_to_staging — at a page-loaded batch's commit, its scope rows become the staging
-- table that usage_*_insert_staged reads. Parameters: none.
DROP TABLE staging_usage;
ALTER TABLE scope_usage RENAME TO staging_usage;
