-- Report: program_spend
-- Parameters: none; reads rpt_days (src/store/report/sql/stage_days.sql of the same run: the rows of
-- spend_program_days for the period and granularity).
-- The lines are the table macros spend_lines_of and spend_program_report_of
-- (queries/schema/009_report_stages.sql), which the analysts' spend views read too (through
-- spend_program_report). One row per organization, program, billing month,
-- period (plan), metric and rate in force (a mid-month plan or rate change splits a month into
-- lines). Lines with no usage are left out. cost is rounded to cents once per line (half-up);
-- totals are sums of lines. An unpriced line has cost NULL, priced = false and says why in note.
WITH rpt_lines AS (SELECT * FROM spend_lines_of('rpt_days'))
SELECT * FROM spend_program_report_of('rpt_lines')
ORDER BY line_no;
