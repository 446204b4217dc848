-- Query: materialise (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), <report> (the text of one
-- src/report/sql/<name>.sql file), whose own parameters are bound to this statement.
-- Runs a report once into a TEMP table that every writer then reads, so Parquet and workbook
-- hold the same rows.
CREATE OR REPLACE TEMP TABLE {{table}} AS
{{report}}
