-- Query: spend_month_days (export --dataset, the first stage of a spend_daily month; TEMP table
-- spend_month_days, run by src/store/facade/exports.ts)
-- Parameters: $granularity VARCHAR (the month's, spend_month_granularity_in; NULL: no rows),
--             $from, $to TIMESTAMPTZ (the billing month, UTC).
-- The rows of spend_program_days (migration 007) at the month's granularity alone, with a day_key,
-- computed once: the lines and the split below read them rather than evaluating the macro again, as
-- spend_daily_in does (it prices every granularity, twice each, and keeps one).
SELECT row_number() OVER () AS day_key, d.*
FROM spend_program_days($granularity, $from, $to) d
