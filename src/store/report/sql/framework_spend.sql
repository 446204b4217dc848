-- Report: framework_spend
-- Parameters: $line_offset BIGINT (the lines of the chunks before this one); reads rpt_daily_chunk,
-- one chunk of rpt_daily (src/store/report/sql/daily_chunk.sql of the same run: the detail of program_spend's
-- lines). The lines are numbered program first and never span programs, so the chunks, in order,
-- give the lines of the whole period (report/stages.ts).
-- The lines are the table macro spend_framework_of (queries/schema/009_report_stages.sql), which
-- the analysts' spend_month_framework view reads too (through spend_framework_report): every
-- program_spend line (program_line_no) split into
--   line_type 'framework':    one current framework's share of the line;
--   line_type 'unattributed': the line's usage no current framework accounts for;
--   line_type 'no_framework': the whole line, for charges frameworks do not report (v1, extra
--                             branches, snapshot storage).
-- Costs are the line's rounded cost allocated by largest remainder, so the report adds up to
-- program_spend per line, per program and in total.
SELECT * REPLACE (CAST($line_offset + line_no AS BIGINT) AS line_no) FROM spend_framework_of('rpt_daily_chunk')
ORDER BY line_no;
