-- Query: growth_history (benchmark set-up, bench/growth.ts; not product SQL)
-- Parameters: $granularity VARCHAR ('hourly' or 'daily'), $source_day TIMESTAMPTZ (a whole UTC day the
-- collector stored), $first_day TIMESTAMPTZ and $end_day TIMESTAMPTZ (the days to fill, [first, end)),
-- $run_id VARCHAR, $at TIMESTAMPTZ.
-- History made from collected rows: the source day's buckets copied to every day of [first, end),
-- their times shifted by whole days, values and everything else unchanged; one complete coverage
-- window per (source, scope) of the granularity, under a run of its own, so the planner, the export
-- and the alerts see those days as collected; the analyst copy's parts of those days marked.
INSERT INTO usage_program_buckets
SELECT b.* REPLACE (b.timeframe_start + to_days(CAST(k AS INTEGER)) AS timeframe_start,
                    b.timeframe_end + to_days(CAST(k AS INTEGER)) AS timeframe_end)
FROM usage_program_buckets b,
     range(CAST(date_diff('day', $source_day, $first_day) AS BIGINT), CAST(date_diff('day', $source_day, $end_day) AS BIGINT)) r(k)
WHERE b.granularity = $granularity AND b.timeframe_start >= $source_day AND b.timeframe_start < $source_day + INTERVAL 1 DAY;

INSERT INTO usage_framework_buckets
SELECT b.* REPLACE (b.timeframe_start + to_days(CAST(k AS INTEGER)) AS timeframe_start,
                    b.timeframe_end + to_days(CAST(k AS INTEGER)) AS timeframe_end)
FROM usage_framework_buckets b,
     range(CAST(date_diff('day', $source_day, $first_day) AS BIGINT), CAST(date_diff('day', $source_day, $end_day) AS BIGINT)) r(k)
WHERE b.granularity = $granularity AND b.timeframe_start >= $source_day AND b.timeframe_start < $source_day + INTERVAL 1 DAY;

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
