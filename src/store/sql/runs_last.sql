-- Query: runs_last
-- Parameters: $n INTEGER. The most recent collection runs, newest first.
SELECT run_id, command, started_at, finished_at, status, requests, retries, throttled, pages,
       rows_loaded, error, options, inventory_requests
FROM collection_runs
ORDER BY started_at DESC, run_id DESC
LIMIT $n;
