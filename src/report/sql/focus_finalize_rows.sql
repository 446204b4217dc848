-- Query: focus_finalize_rows (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), $finalization_id VARCHAR, $month VARCHAR,
-- $after BIGINT. Records the rows after line $after (all rows the first time; the new correction
-- rows later), column for column by name.
INSERT INTO report_focus_finalized BY NAME
SELECT $finalization_id AS finalization_id, $month AS month, line_no AS row_no, * EXCLUDE (line_no)
FROM {{table}} WHERE line_no > $after ORDER BY line_no;
