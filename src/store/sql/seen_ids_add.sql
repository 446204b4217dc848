-- Query: seen_ids_add — records a staged page's ids in the batch's seen_ids, so that the deletion guard
-- at commit (usage_*_window_deletions.sql) knows every id the fetch returned. Parameters: none.
INSERT INTO seen_ids SELECT id FROM page_ids WHERE id IS NOT NULL;
