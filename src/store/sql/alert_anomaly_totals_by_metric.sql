-- Query: alert_anomaly_totals_by_metric (the anomaly rule's input priced metric by metric, src/store/alerts.ts)
-- Parameters: $eval_from VARCHAR, $eval_to VARCHAR (YYYY-MM-DD, exclusive: the days evaluated),
-- $baseline_days INTEGER, $min_actual_cents BIGINT, $programs VARCHAR[] (the programs read; a few
-- hundred at a time, in bounded memory). What alert_anomaly_totals.sql answers, for the programs whose
-- baseline days are not all priced at their evaluated day's rates.
-- Daily spend of summed metrics (gauges are billed on a month's peak, not by day) at list rates before
-- included allowances, so an allowance running out is not an anomaly, read from the priced days
-- (alert_priced_days, kept by alert_priced_days_fill.sql). A baseline day's usage is priced at the
-- rate the evaluated day has for the metric (the day's own rate when the day has none), so a plan or
-- price change is not one either. One row per program and evaluated day whose spend reaches
-- $min_actual_cents (below it no rule fires): the day's spend, the program's first day with usage in
-- the rows read, and the baseline days that have usage (days without are zero), in no order (an ordered list
-- aggregate holds a buffer per group: src/store/alerts.ts sorts them).
WITH q AS MATERIALIZED (
  SELECT program_id, any_value(org_id) AS org_id, usage_day, metric, CAST(sum(qty) AS HUGEINT) AS qty,
    max(rate_micro) AS rate_micro, any_value(divisor) AS divisor, CAST(sum(cents) AS HUGEINT) AS cents
  FROM alert_priced_days
  WHERE aggregation = 'sum'
    AND usage_day >= CAST($eval_from AS DATE) - $baseline_days AND usage_day < CAST($eval_to AS DATE)
    AND program_id IN (SELECT unnest($programs))
  GROUP BY program_id, usage_day, metric
),
first_day AS (SELECT program_id, min(usage_day) AS first_day FROM q GROUP BY program_id),
act AS (
  SELECT program_id, any_value(org_id) AS org_id, usage_day AS day, CAST(sum(cents) AS BIGINT) AS actual
  FROM q WHERE usage_day >= CAST($eval_from AS DATE)
  GROUP BY program_id, usage_day
  HAVING sum(cents) >= $min_actual_cents
),
bl AS (
  SELECT a.program_id, a.day, b.usage_day AS bday,
    CAST(sum(spend_cents(b.qty, coalesce(e.rate_micro, b.rate_micro), coalesce(e.divisor, b.divisor))) AS BIGINT) AS cents
  FROM act a
  JOIN q b ON b.program_id = a.program_id AND b.usage_day < a.day AND b.usage_day >= a.day - $baseline_days
  LEFT JOIN q e ON e.program_id = a.program_id AND e.usage_day = a.day AND e.metric = b.metric
  GROUP BY a.program_id, a.day, b.usage_day
),
bl_days AS (
  SELECT program_id, day, list(struct_pack(day := CAST(bday AS VARCHAR), cents := cents)) AS baseline FROM bl GROUP BY program_id, day
)
SELECT a.program_id, a.org_id, CAST(a.day AS VARCHAR) AS day, a.actual, CAST(f.first_day AS VARCHAR) AS first_day,
  coalesce(b.baseline, []) AS baseline
FROM act a JOIN first_day f USING (program_id)
LEFT JOIN bl_days b ON b.program_id = a.program_id AND b.day = a.day
ORDER BY a.program_id, a.day;
