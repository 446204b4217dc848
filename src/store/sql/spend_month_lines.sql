-- Query: spend_month_lines (export --dataset, a spend_daily month's program lines; TEMP table
-- spend_month_lines, run by src/store/facade/exports.ts)
-- Parameters: none; reads spend_month_days (spend_month_days.sql).
-- spend_program_report over the staged days: the month's program_spend lines, numbered (line_no).
WITH spend_month_line_sums AS (SELECT * FROM spend_lines_of('spend_month_days'))
SELECT * FROM spend_program_report_of('spend_month_line_sums')
