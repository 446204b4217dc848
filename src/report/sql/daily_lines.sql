-- Query: daily_lines (report input for the FOCUS export, the charts and the forecast; not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[].
-- The rows are the table macro spend_daily_report (queries/schema/007_one_rounding_basis.sql), which
-- the analysts' spend_daily view reads too: each program_spend / framework_spend line's rounded cost
-- spread over the days of its usage by largest remainder, so daily amounts add up to the workbook
-- exactly. One row per line and day.
SELECT * FROM spend_daily_report($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics)
ORDER BY org_id NULLS FIRST, program_id, usage_day, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id
