-- Query: run_finish
-- Parameters: $run_id VARCHAR, $finished_at TIMESTAMPTZ, $status VARCHAR, $requests BIGINT,
--   $retries BIGINT, $throttled BIGINT, $pages BIGINT, $rows_loaded BIGINT, $error VARCHAR,
--   $inventory_requests BIGINT.
UPDATE collection_runs
SET finished_at = $finished_at, status = $status, requests = $requests, retries = $retries,
    throttled = $throttled, pages = $pages, rows_loaded = $rows_loaded, error = $error,
    inventory_requests = $inventory_requests
WHERE run_id = $run_id;
