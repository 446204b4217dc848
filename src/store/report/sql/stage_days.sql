-- Query: stage_days (report stage; TEMP table rpt_days_unsorted, then rpt_days by stage_days_by_chunk.sql; not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- The finest priced grain, once per run: the rows of spend_program_days (migration 007: one row per
-- program line and UTC day, the allowance taken in time order over its whole pool) with a day_key,
-- the input of program_spend and of the detail (rpt_daily), which are computed from it rather than
-- evaluating the macro again. Its windows run over whole pools, so it is computed for all programs.
SELECT row_number() OVER () AS day_key, d.*
FROM spend_program_days($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ)) d
