-- Query: money_totals (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent). Row count and the sum of the rounded
-- costs of a materialised report: the totals row of its sheet and the report's total.
SELECT count(*) AS n_rows, CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost,
       CAST(count(*) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_lines
FROM {{table}};
