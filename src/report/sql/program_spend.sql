-- Report: program_spend
-- Parameters: $granularity VARCHAR ('hourly' | 'daily' | 'monthly': the finest complete one),
--             $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive; buckets by timeframe_start).
-- The lines are the table macro spend_program_report (queries/schema/004_spend_in_database.sql),
-- which the analysts' spend views read too. One row per organization, program, billing month,
-- period (plan), metric and rate in force (a mid-month plan or rate change splits a month into
-- lines). Lines with no usage are left out. cost is rounded to cents once per line (half-up);
-- totals are sums of lines. An unpriced line has cost NULL, priced = false and says why in note.
SELECT * FROM spend_program_report($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ))
ORDER BY line_no;
