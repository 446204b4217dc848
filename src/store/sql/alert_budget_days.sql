-- Query: alert_budget_days (the budgets' input, src/alerts/evaluate.ts)
-- Parameters: $month VARCHAR (YYYY-MM-01), $orgs VARCHAR[] (organizations with a budget), $programs
-- VARCHAR[] (programs named by budgets of the config),
-- $metrics VARCHAR[] (the metrics billed on a peak or with an allowance in the month: the only ones read line by line),
-- $chunks INTEGER, $chunk INTEGER (the allowance pools whose key hashes into this chunk; 1 and 0 read all).
-- Net spend per UTC day of the month, as program_spend bills it: the included allowance taken in time
-- order within its pool (spend_program_days, migration 007), a peak-billed metric charged on its
-- line's first day at the line's peak; each day line (program, period, metric, rate) rounded to cents
-- once (lines of each API version apart, as the spend views keep them). The lines no allowance applies to come summed by day (alert_program_days.plain_cents), the
-- others line by line from alert_priced_days. One row per organization and day, and one per named
-- program and day.
-- Only the organizations a budget is about ($orgs) and those of the named programs (an allowance may be
-- pooled by organization) are read.
WITH orgs AS (
  SELECT unnest($orgs) AS org_key
  UNION
  SELECT DISTINCT coalesce(org_id, '') FROM alert_program_days
  WHERE list_contains($programs, program_id)
    AND usage_day >= CAST($month AS DATE) AND usage_day < CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS DATE)
),
chunk AS (
  SELECT CASE WHEN EXISTS (SELECT 1 FROM price_allowances WHERE scope = 'org_month') THEN 'org' ELSE 'program' END AS pool
),
plain AS (
  SELECT org_id, program_id, usage_day, plain_cents AS cents FROM alert_program_days
  WHERE usage_day >= CAST($month AS DATE) AND usage_day < CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS DATE)
    AND coalesce(org_id, '') IN (SELECT org_key FROM orgs)
    AND hash(CASE WHEN (SELECT pool FROM chunk) = 'org' THEN coalesce(org_id, '') ELSE program_id END)
        % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
),
-- The plans and metrics an allowance applies to in the month (joined, not correlated: a correlated
-- EXISTS would hold every row of the month in memory).
al AS (
  SELECT DISTINCT plan, metric FROM price_allowances
  WHERE CAST($month AS DATE) >= effective_from AND (effective_to IS NULL OR CAST($month AS DATE) < effective_to)
),
d AS (
  SELECT x.api_version, x.org_id, x.program_id, x.period_id, x.period_plan, x.period_start, x.metric, x.rate_id, x.rate_micro, x.divisor, x.aggregation,
    x.usage_day, x.qty, x.peak
  FROM alert_priced_days x LEFT JOIN al ON al.plan = x.period_plan AND al.metric = x.metric
  WHERE x.usage_day >= CAST($month AS DATE) AND x.usage_day < CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS DATE)
    AND list_contains($metrics, x.metric) AND (x.aggregation = 'max' OR al.plan IS NOT NULL)
    AND coalesce(x.org_id, '') IN (SELECT org_key FROM orgs)
    AND hash(CASE WHEN (SELECT pool FROM chunk) = 'org' THEN coalesce(x.org_id, '') ELSE x.program_id END)
        % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
),
lines AS (
  SELECT api_version, org_id, program_id, period_id, period_plan, period_start, metric, rate_id, rate_micro, divisor, usage_day, qty FROM d WHERE aggregation <> 'max'
  UNION ALL
  SELECT api_version, org_id, program_id, period_id, period_plan, min(period_start), metric, rate_id, any_value(rate_micro), any_value(divisor), min(usage_day), max(peak)
  FROM d WHERE aggregation = 'max'
  GROUP BY api_version, org_id, program_id, period_id, period_plan, metric, rate_id
),
pooled AS (
  SELECT l.*, a.allowance_id, a.included_raw, CASE a.scope WHEN 'org_month' THEN coalesce(l.org_id, '') ELSE l.program_id END AS pool_key
  FROM lines l
  JOIN price_allowances a ON a.plan = l.period_plan AND a.metric = l.metric
   AND CAST($month AS DATE) >= a.effective_from AND (a.effective_to IS NULL OR CAST($month AS DATE) < a.effective_to)
),
netted AS (
  SELECT org_id, program_id, usage_day, rate_micro, divisor,
    qty - least(greatest(qty, CAST(0 AS HUGEINT)), greatest(CAST(0 AS HUGEINT), included_raw - coalesce(sum(greatest(qty, CAST(0 AS HUGEINT))) OVER (
      PARTITION BY allowance_id, pool_key
      ORDER BY usage_day, period_start, period_id, rate_id NULLS FIRST, program_id, metric
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS billable
  FROM pooled
),
billed AS (
  SELECT l.org_id, l.program_id, l.usage_day, l.rate_micro, l.divisor, l.qty AS billable
  FROM lines l LEFT JOIN al ON al.plan = l.period_plan AND al.metric = l.metric WHERE al.plan IS NULL
  UNION ALL
  SELECT * FROM netted
),
days AS (
  SELECT org_id, program_id, usage_day, CAST(sum(cents) AS BIGINT) AS cents FROM (
    SELECT org_id, program_id, usage_day, spend_cents(billable, rate_micro, divisor) AS cents FROM billed
    UNION ALL
    SELECT org_id, program_id, usage_day, cents FROM plain
  ) GROUP BY org_id, program_id, usage_day
)
SELECT 'organization' AS scope_kind, coalesce(org_id, '') AS scope_id, CAST(usage_day AS VARCHAR) AS day, CAST(sum(cents) AS BIGINT) AS cents
FROM days GROUP BY org_id, usage_day
UNION ALL
SELECT 'program', program_id, CAST(usage_day AS VARCHAR), cents FROM days WHERE list_contains($programs, program_id)
ORDER BY 1, 2, 3;
