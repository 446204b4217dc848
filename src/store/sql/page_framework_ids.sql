-- Query: page_framework_ids — the framework ids on a parsed frameworks page, into the TEMP table
-- page_ids (id): what the page replaces. Parameters: none.
CREATE OR REPLACE TEMP TABLE page_ids AS
SELECT DISTINCT x.framework_id->>'$' AS id FROM (SELECT unnest(items) AS x FROM page);
