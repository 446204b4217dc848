-- Query: page_summary — what the pager needs from the parsed page: the number of items (NULL when the
-- body had no items array), the cursor, and the program ids on it. Parameters: none.
SELECT len(items) AS items, cursor, list_transform(items, x -> (x.program_id->>'$')) AS program_ids FROM page;
