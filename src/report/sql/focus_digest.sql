-- Query: focus_digest (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), $lo BIGINT, $hi BIGINT. One block of the
-- FOCUS rows (line_no in ($lo, $hi]): its row count and the sha256 of its rows as text in line
-- order. report/focus.ts hashes the blocks of 10,000 lines one query at a time, then the block
-- hashes in order, so memory stays bounded however many rows there are. What a finalisation records.
SELECT count(*) AS n, sha256(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.line_no), '')) AS h
FROM {{table}} t
WHERE t.line_no > $lo AND t.line_no <= $hi;
