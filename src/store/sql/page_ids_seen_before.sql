-- Query: page_ids_seen_before — whether an id on this page already came on an earlier page of the
-- batch (a listing that shifted under the cursor): then the page must replace, not just add.
-- Parameters: none.
SELECT EXISTS (SELECT 1 FROM page_ids JOIN seen_ids USING (id)) AS seen;
