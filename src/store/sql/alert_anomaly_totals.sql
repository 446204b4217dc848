-- Query: alert_anomaly_totals (the anomaly rule's input, src/store/alerts.ts)
-- Parameters: $eval_from VARCHAR, $eval_to VARCHAR (YYYY-MM-DD, exclusive: the days evaluated),
-- $baseline_days INTEGER, $min_baseline_days INTEGER, $min_actual_cents BIGINT (the rule's minimum
-- excess), $chunks INTEGER, $chunk INTEGER (the programs whose hash falls in this chunk: a large account
-- is read a chunk at a time, in bounded memory).
-- Daily spend of summed metrics (gauges are billed on a month's peak, not by day) at list rates before
-- included allowances, so an allowance running out is not an anomaly, from alert_program_days. A
-- baseline day's usage is priced at the rates of the day evaluated (so a plan or price change is not
-- an anomaly either): a baseline day with the evaluated day's rates_key is its own spend, and `exact`
-- is false when some baseline day has another key (or none), for alert_anomaly_totals_by_metric.sql
-- to price metric by metric. One row per program and evaluated day whose spend reaches
-- $min_actual_cents (below it no rule fires): the day's spend, the program's first day with usage in
-- the rows read, and the baseline days that have usage (days without are zero), in no order (an ordered list
-- aggregate holds a buffer per group: src/store/alerts.ts sorts them).
WITH pd AS (
  SELECT program_id, any_value(org_id) AS org_id, usage_day, CAST(sum(cents) AS BIGINT) AS cents,
    CASE WHEN count(*) = 1 THEN any_value(rates_key) END AS rates_key
  FROM alert_program_days
  WHERE usage_day >= CAST($eval_from AS DATE) - $baseline_days AND usage_day < CAST($eval_to AS DATE)
    AND hash(program_id) % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
  GROUP BY program_id, usage_day
),
first_day AS (SELECT program_id, min(usage_day) AS first_day FROM pd GROUP BY program_id),
act AS (
  SELECT program_id, org_id, usage_day AS day, cents AS actual, rates_key FROM pd
  WHERE usage_day >= CAST($eval_from AS DATE) AND cents >= $min_actual_cents
),
bl AS (
  SELECT a.program_id, a.day, list(struct_pack(day := CAST(b.usage_day AS VARCHAR), cents := b.cents)) AS baseline,
    bool_and(coalesce(b.rates_key = a.rates_key, false)) AS same_rates
  FROM act a
  JOIN pd b ON b.program_id = a.program_id AND b.usage_day < a.day AND b.usage_day >= a.day - $baseline_days
  GROUP BY a.program_id, a.day
),
out AS (
  SELECT a.program_id, a.org_id, a.day, a.actual, f.first_day, coalesce(b.baseline, []) AS baseline,
    a.rates_key IS NOT NULL AND coalesce(b.same_rates, true) AS exact,
    -- A whole baseline (usage on its first day or before): twice its median, zeros included.
    CASE WHEN f.first_day <= a.day - $baseline_days THEN list_sort(list_resize(list_transform(coalesce(b.baseline, []), x -> x.cents), $baseline_days, 0)) END AS s
  FROM act a JOIN first_day f USING (program_id)
  LEFT JOIN bl b ON b.program_id = a.program_id AND b.day = a.day
)
SELECT program_id, org_id, CAST(day AS VARCHAR) AS day, actual, CAST(first_day AS VARCHAR) AS first_day, baseline, exact
FROM out
-- Left out: a day priced exactly whose whole baseline's median leaves an excess below $min_actual_cents
-- (excess = actual - median >= min is 2 x actual - 2 x median >= 2 x min - 1 with the median rounded
-- half-up), when that baseline is long enough for the anomaly rule (else it may be new spend).
WHERE NOT exact OR s IS NULL OR $baseline_days < $min_baseline_days
   OR 2 * actual - CASE WHEN $baseline_days % 2 = 1 THEN 2 * s[($baseline_days + 1) // 2] ELSE s[$baseline_days // 2] + s[$baseline_days // 2 + 1] END
      >= 2 * $min_actual_cents - 1
ORDER BY program_id, day;
