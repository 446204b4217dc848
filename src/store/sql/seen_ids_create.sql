-- Query: seen_ids_create — the ids (programs, or frameworks) a page-loaded batch has replaced so far.
-- Parameters: none. TEMP, on the batch's own connection.
CREATE OR REPLACE TEMP TABLE seen_ids (id VARCHAR);
