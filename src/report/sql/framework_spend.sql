-- Report: framework_spend
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- The lines are the table macro spend_framework_report (queries/schema/007_one_rounding_basis.sql),
-- which the analysts' spend_month_framework view reads too: every program_spend line
-- (program_line_no) split into
--   line_type 'framework':    one current framework's share of the line;
--   line_type 'unattributed': the line's usage no current framework accounts for;
--   line_type 'no_framework': the whole line, for charges frameworks do not report (v1, extra
--                             branches, snapshot storage).
-- Costs are the line's rounded cost allocated by largest remainder, so the report adds up to
-- program_spend per line, per program and in total.
SELECT * FROM spend_framework_report($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics)
ORDER BY line_no;
