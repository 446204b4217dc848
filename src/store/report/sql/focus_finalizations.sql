-- Query: focus_finalizations (report input)
-- Parameters: $month VARCHAR ('YYYY-MM'). The month's finalisations, oldest first, with the rows each recorded.
SELECT finalization_id, seq, finalized_at, price_book_revision, n_rows, billed_total, rows_sha256
FROM report_finalizations WHERE month = $month ORDER BY seq;
