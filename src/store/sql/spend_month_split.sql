-- Query: spend_month_split (export --dataset, a spend_daily month's daily rows before numbering; TEMP
-- table spend_month_split, run by src/store/facade/exports.ts)
-- Parameters: $from TIMESTAMPTZ (the billing month's start), $framework_metrics VARCHAR[].
-- Reads spend_month_days, spend_month_lines and spend_month_framework_days. Each line's rounded cost
-- allocated to its days and frameworks (spend_day_split, migration 009), as spend_daily_in does.
SELECT *
FROM spend_day_split('spend_month_days', 'spend_month_lines', 'spend_month_framework_days', $framework_metrics)
WHERE billing_month = CAST($from AS DATE)
