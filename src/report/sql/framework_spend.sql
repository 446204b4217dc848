-- Report: framework_spend
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- The lines are the table macro spend_framework_report (queries/schema/004_spend_in_database.sql):
--   line_type 'framework':      one current framework, its quantity priced with the rate and plan
--                               of its bucket; the program line's allowance is shared out among the
--                               program's framework lines in framework_id order.
--   line_type 'reconciliation': one per program line: usage no current framework accounts for,
--                               so framework lines plus reconciliation equal program_spend exactly.
SELECT * FROM spend_framework_report($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics)
ORDER BY line_no;
