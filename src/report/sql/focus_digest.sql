-- Query: focus_digest (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), $after BIGINT. Row count, BilledCost sum and
-- sha256 of the rows after line $after, each row's text in line order: what a finalisation records.
SELECT count(*) AS n_rows, CAST(coalesce(sum(t."BilledCost"), 0) AS DECIMAL(18,2)) AS billed,
  sha256(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.line_no), '')) AS digest
FROM {{table}} t WHERE t.line_no > $after;
