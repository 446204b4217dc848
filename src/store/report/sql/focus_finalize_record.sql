-- Query: focus_finalize_record (report output)
-- Parameters: $finalization_id VARCHAR, $month VARCHAR, $seq INTEGER, $finalized_at TIMESTAMPTZ,
-- $revision VARCHAR, $n_rows BIGINT, $billed_total DECIMAL(18,2), $rows_sha256 VARCHAR.
INSERT INTO report_finalizations (finalization_id, month, seq, finalized_at, price_book_revision, n_rows, billed_total, rows_sha256)
VALUES ($finalization_id, $month, $seq, $finalized_at, $revision, $n_rows, CAST($billed_total AS DECIMAL(18,2)), $rows_sha256);
