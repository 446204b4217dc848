-- Report: framework_spend
-- Parameters: none; reads rpt_daily (src/report/sql/daily_chunk.sql of the same run: the detail of
-- program_spend's lines).
-- The lines are the table macro spend_framework_of (queries/schema/009_report_stages.sql), which
-- the analysts' spend_month_framework view reads too (through spend_framework_report): every
-- program_spend line (program_line_no) split into
--   line_type 'framework':    one current framework's share of the line;
--   line_type 'unattributed': the line's usage no current framework accounts for;
--   line_type 'no_framework': the whole line, for charges frameworks do not report (v1, extra
--                             branches, snapshot storage).
-- Costs are the line's rounded cost allocated by largest remainder, so the report adds up to
-- program_spend per line, per program and in total.
SELECT * FROM spend_framework_of('rpt_daily')
ORDER BY line_no;
