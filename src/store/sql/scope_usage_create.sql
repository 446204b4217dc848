-- Query: scope_usage_create — the rows of every page a page-loaded batch has fetched so far. TEMP, on the
-- batch's own connection (DuckDB spills it to the store's temp directory beyond its memory limit), so
-- nothing of a scope is visible until the batch's commit moves it into the fact table in one
-- transaction, and a crash or an abort leaves nothing behind. Parameters: none.
CREATE OR REPLACE TEMP TABLE scope_usage AS SELECT * FROM staging_usage WITH NO DATA;
