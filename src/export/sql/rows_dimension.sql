-- Query: rows_dimension (export --dataset)
-- Parameters: none; {{table}} is programs, frameworks or snapshots (quoted by quoteIdent).
SELECT * FROM {{table}} ORDER BY ALL
