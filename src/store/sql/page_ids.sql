-- Query: page_ids — the program ids on a parsed programs page (v1 or v2), into the TEMP table
-- page_ids (id): what the page replaces. Parameters: none.
CREATE OR REPLACE TEMP TABLE page_ids AS
SELECT DISTINCT x.program_id->>'$' AS id FROM (SELECT unnest(items) AS x FROM page);
