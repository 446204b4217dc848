-- Query: run_start
-- Parameters: $run_id VARCHAR, $command VARCHAR, $started_at TIMESTAMPTZ, $options VARCHAR (JSON, no secrets).
INSERT INTO collection_runs (run_id, command, started_at, status, options)
VALUES ($run_id, $command, $started_at, 'running', $options);
