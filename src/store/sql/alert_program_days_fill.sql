-- Query: alert_program_days_fill (the alert rules' program days, src/store/alerts.ts)
-- Parameters: $from VARCHAR, $to VARCHAR (YYYY-MM-DD, exclusive: bounds of the keys), $chunks INTEGER,
-- $chunk INTEGER (the programs whose hash falls in this chunk, as alert_priced_days_fill.sql). Sums the priced
-- days of the organizations and days of alert_fill_keys (a TEMP table; alert_priced_days just filled
-- by alert_priced_days_fill.sql) by organization, program and day, summed metrics only; the caller
-- deletes those keys first, in the same transaction.
-- rates_key names (md5, a key only) the plan and its rates in force at the day's start when every
-- metric of the day has one bucket row, priced at one of them: two days with the same key price each metric at the same rate, so a
-- baseline day priced at the evaluated day's rates is its own spend (alert_anomaly_totals.sql).
-- plain_cents is the spend of the lines (program, period, metric, rate, day) no included allowance of
-- the day's month applies to, each rounded to cents once, as alert_budget_days.sql bills them.
INSERT INTO alert_program_days BY NAME
-- The plans and metrics an allowance applies to, by month (joined, not correlated: a correlated EXISTS
-- would hold every row of the days in memory).
WITH al AS (
  SELECT DISTINCT a.plan, a.metric, m.month FROM price_allowances a
  JOIN (SELECT DISTINCT CAST(date_trunc('month', CAST($from AS DATE) + CAST(i AS INTEGER)) AS DATE) AS month
        FROM range(0, CAST($to AS DATE) - CAST($from AS DATE)) t(i)) m
    ON m.month >= a.effective_from AND (a.effective_to IS NULL OR m.month < a.effective_to)
),
d AS (
  SELECT x.*, al.plan IS NOT NULL AS allowance
  FROM alert_priced_days x
  SEMI JOIN (SELECT DISTINCT org_key, usage_day FROM alert_fill_keys) k
    ON k.org_key = coalesce(x.org_id, '') AND k.usage_day = x.usage_day
  LEFT JOIN al ON al.plan = x.period_plan AND al.metric = x.metric AND al.month = CAST(date_trunc('month', x.usage_day) AS DATE)
  WHERE x.aggregation = 'sum' AND x.usage_day >= CAST($from AS DATE) AND x.usage_day < CAST($to AS DATE)
    AND hash(x.program_id) % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
),
plans AS (
  SELECT p.plan, p.usage_day, md5(p.plan || ':' || array_to_string(list(r.rate_id ORDER BY r.rate_id), ',')) AS rates_key,
    list(r.rate_id) AS rate_ids
  -- Every plan on every day of the range: read from the rates, not from d, which is then read once (streamed).
  FROM (SELECT DISTINCT rp.plan, CAST($from AS DATE) + CAST(t.i AS INTEGER) AS usage_day
        FROM price_rates rp, range(0, CAST($to AS DATE) - CAST($from AS DATE)) t(i)) p
  JOIN price_rates r ON r.plan = p.plan
   AND CAST(p.usage_day AS TIMESTAMP) AT TIME ZONE 'UTC' >= r.effective_from
   AND (r.effective_to IS NULL OR CAST(p.usage_day AS TIMESTAMP) AT TIME ZONE 'UTC' < r.effective_to)
  GROUP BY p.plan, p.usage_day
)
SELECT d.org_id, d.program_id, d.usage_day, CAST(sum(d.cents) AS BIGINT) AS cents,
  CASE WHEN count(DISTINCT d.period_plan) = 1 AND count(*) = count(DISTINCT d.metric) AND bool_and(d.bucket_rows = 1)
        AND bool_and(coalesce(list_contains(p.rate_ids, d.rate_id), false))
       THEN any_value(p.rates_key) END AS rates_key,
  CAST(coalesce(sum(spend_cents(d.qty, d.rate_micro, d.divisor)) FILTER (WHERE NOT d.allowance), 0) AS BIGINT) AS plain_cents
FROM d LEFT JOIN plans p ON p.plan = d.period_plan AND p.usage_day = d.usage_day
GROUP BY d.org_id, d.program_id, d.usage_day;
