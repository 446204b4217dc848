-- Query: page (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), $after BIGINT, $upto BIGINT.
-- One page of a materialised report in line order, for the workbook writer.
SELECT * FROM {{table}} WHERE line_no > $after AND line_no <= $upto ORDER BY line_no;
