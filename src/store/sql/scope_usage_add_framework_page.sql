-- Query: scope_usage_add_framework_page — adds a checked page (staging_usage) to the scope's rows. A framework
-- that already came on an earlier page (a listing that shifted under the cursor) is replaced by its
-- latest page: the API's last answer wins. Parameters: none.
DELETE FROM scope_usage WHERE framework_id IN (SELECT id FROM page_ids);
INSERT INTO scope_usage SELECT * FROM staging_usage;
DELETE FROM staging_usage;
