-- Query: focus_digest (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), $after BIGINT. Row count, BilledCost sum and
-- sha256 of the rows after line $after: each block of 10,000 rows hashed in line order, then the
-- block hashes in order, so memory stays bounded however many rows there are. What a finalisation records.
WITH blocks AS (
  SELECT t.line_no // 10000 AS block, count(*) AS n, sum(t."BilledCost") AS billed,
    sha256(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.line_no)) AS h
  FROM {{table}} t WHERE t.line_no > $after
  GROUP BY block
)
SELECT CAST(coalesce(sum(n), 0) AS BIGINT) AS n_rows, CAST(coalesce(sum(billed), 0) AS DECIMAL(18,2)) AS billed,
  sha256(coalesce(string_agg(h, chr(10) ORDER BY block), '')) AS digest
FROM blocks;
