-- Query: stage_framework_days (report stage; TEMP table rpt_framework_days, not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- The current frameworks' usage per program line key and day (macro spend_framework_days, migration
-- 009), once per run, so each chunk of programs reads its part instead of the frameworks' buckets.
SELECT * FROM spend_framework_days($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics)
