-- Query: growth_history (benchmark set-up, bench/growth.ts; not product SQL)
-- Parameters: $granularity VARCHAR ('hourly' or 'daily'), $first_day TIMESTAMPTZ and $end_day
-- TIMESTAMPTZ (the days filled by growth_history_day.sql, [first, end)), $run_id VARCHAR, $at TIMESTAMPTZ.
-- What makes the filled days collected history: one complete coverage window per (source, scope) of
-- the granularity under a run of its own, so the planner, the export and the alerts see them as
-- collected; the analyst copy's parts of those days marked.
INSERT INTO collection_runs (run_id, command, started_at, finished_at, status)
VALUES ($run_id, 'history', $at, $at, 'complete');

INSERT INTO coverage
SELECT DISTINCT source, granularity, scope, $first_day, $end_day, 'complete', 0, $run_id, $at, NULL
FROM coverage WHERE granularity = $granularity AND status = 'complete';

INSERT INTO analyst_dirty
SELECT DISTINCT t.table_name, $granularity || '/' || CASE WHEN $granularity = 'hourly'
  THEN strftime(timezone('UTC', $first_day) + to_days(CAST(k AS INTEGER)), '%Y-%m-%d')
  ELSE strftime(timezone('UTC', $first_day) + to_days(CAST(k AS INTEGER)), '%Y-%m') END
FROM range(0, CAST(date_diff('day', $first_day, $end_day) AS BIGINT)) r(k),
     (VALUES ('usage_program_buckets'), ('usage_framework_buckets')) t(table_name);

-- The grown days count as taken in by every dataset folder (bench/growth.ts markDatasetCurrent says why).
INSERT INTO export_runs SELECT dataset_dir, $run_id FROM export_datasets;

-- The bucket tables' row counts (migration 020) follow the rows added, as every product write keeps them.
UPDATE usage_row_counts SET row_count = (SELECT count(*) FROM usage_program_buckets)
WHERE table_name = 'usage_program_buckets';
UPDATE usage_row_counts SET row_count = (SELECT count(*) FROM usage_framework_buckets)
WHERE table_name = 'usage_framework_buckets';

-- The coverage summary per scope (migration 021) follows the windows added: recomputed for the granularity.
DELETE FROM coverage_by_scope WHERE granularity = $granularity;
INSERT INTO coverage_by_scope SELECT * FROM coverage_scope_summary(NULL, $granularity, NULL);
