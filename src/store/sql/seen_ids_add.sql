-- Query: seen_ids_add — records the ids a page-loaded batch's pages returned in its seen_ids, so that
-- the deletion guard at commit (usage_*_window_deletions.sql) knows every id the fetch returned.
-- Parameters: $ids VARCHAR[].
INSERT INTO seen_ids SELECT DISTINCT unnest($ids::VARCHAR[]) AS id;
