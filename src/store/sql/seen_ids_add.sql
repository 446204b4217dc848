-- Query: seen_ids_add — records a committed page's ids in the batch's seen_ids, so that the batch's
-- final sweep knows every id the fetch returned. Parameters: none.
INSERT INTO seen_ids SELECT id FROM page_ids WHERE id IS NOT NULL;
