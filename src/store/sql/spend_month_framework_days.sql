-- Query: spend_month_framework_days (export --dataset, a spend_daily month's framework usage; TEMP
-- table spend_month_framework_days, run by src/store/facade/exports.ts)
-- Parameters: $granularity VARCHAR, $from, $to TIMESTAMPTZ (as spend_month_days.sql),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- The current frameworks' usage per program line key and day, the frameworks current now (as
-- spend_daily_in chooses them: frameworks_at infinity).
SELECT *
FROM spend_framework_days_at($granularity, $from, $to, $framework_metrics, CAST('infinity' AS TIMESTAMPTZ))
