-- Query: growth_history_day (benchmark set-up, bench/growth.ts; not product SQL)
-- Parameters: $granularity VARCHAR ('hourly' or 'daily'), $source_day TIMESTAMPTZ (a whole UTC day the
-- collector stored), $shift INTEGER (days, negative: earlier).
-- One day of history: the source day's buckets copied with their times shifted by whole days, values
-- and everything else unchanged. A day a statement, so that each day's rows sit together in the table
-- as a collector's do (one statement for every day would interleave them).
INSERT INTO usage_program_buckets
SELECT b.* REPLACE (b.timeframe_start + to_days(CAST($shift AS INTEGER)) AS timeframe_start, b.timeframe_end + to_days(CAST($shift AS INTEGER)) AS timeframe_end)
FROM usage_program_buckets b
WHERE b.granularity = $granularity AND b.timeframe_start >= $source_day AND b.timeframe_start < $source_day + INTERVAL 1 DAY;

INSERT INTO usage_framework_buckets
SELECT b.* REPLACE (b.timeframe_start + to_days(CAST($shift AS INTEGER)) AS timeframe_start, b.timeframe_end + to_days(CAST($shift AS INTEGER)) AS timeframe_end)
FROM usage_framework_buckets b
WHERE b.granularity = $granularity AND b.timeframe_start >= $source_day AND b.timeframe_start < $source_day + INTERVAL 1 DAY;
