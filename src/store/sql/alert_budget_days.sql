-- Query: alert_budget_days (the budgets' input, src/alerts/evaluate.ts)
-- Parameters: $month VARCHAR (YYYY-MM-01), $programs VARCHAR[] (programs named by budgets of the config),
-- $chunks INTEGER, $chunk INTEGER (the allowance pools whose key hashes into this chunk; 1 and 0 read all).
-- Net spend per UTC day of the month from the daily buckets, as program_spend bills it: the included
-- allowance taken in time order within its pool (spend_program_days, migration 007), a peak-billed
-- metric charged on its line's first day at the line's peak; each day line (program, period, metric,
-- rate) rounded to cents once. Read from the bucket table with every filter at the scan and priced by
-- the joins of spend_program_buckets (migration 004). One row per organization and day, and one per
-- named program and day.
WITH ub AS (
  SELECT * FROM usage_program_buckets
  WHERE granularity = 'daily'
    AND timeframe_start >= CAST(CAST($month AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND timeframe_start < CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND hash(CASE WHEN EXISTS (SELECT 1 FROM price_allowances WHERE scope = 'org_month') THEN coalesce(org_id, '') ELSE program_id END)
        % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
),
u AS (
  UNPIVOT ub ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
  INTO NAME metric VALUE value
),
d AS (
  SELECT u.org_id, u.program_id, p.period_id, p.period_plan, min(p.period_start) AS period_start, u.metric, r.rate_id,
    any_value(r.rate_micro) AS rate_micro, any_value(m.divisor) AS divisor, any_value(m.aggregation) AS aggregation,
    CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day,
    CAST(sum(u.value) AS HUGEINT) AS qty, CAST(max(u.value) AS HUGEINT) AS peak
  FROM u
  JOIN billing_periods p ON p.period_key = u.period_key
  JOIN price_metrics m ON m.metric = u.metric
  JOIN price_rates r ON r.plan = p.period_plan AND r.metric = u.metric
   AND u.timeframe_start >= r.effective_from AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to)
  GROUP BY u.org_id, u.program_id, p.period_id, p.period_plan, u.metric, r.rate_id, usage_day
),
lines AS (
  SELECT org_id, program_id, period_id, period_plan, period_start, metric, rate_id, rate_micro, divisor, usage_day, qty FROM d WHERE aggregation <> 'max'
  UNION ALL
  SELECT org_id, program_id, period_id, period_plan, min(period_start), metric, rate_id, any_value(rate_micro), any_value(divisor), min(usage_day), max(peak)
  FROM d WHERE aggregation = 'max'
  GROUP BY org_id, program_id, period_id, period_plan, metric, rate_id
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
  SELECT org_id, program_id, usage_day, rate_micro, divisor, qty AS billable FROM lines l
  WHERE NOT EXISTS (SELECT 1 FROM price_allowances a WHERE a.plan = l.period_plan AND a.metric = l.metric
                    AND CAST($month AS DATE) >= a.effective_from AND (a.effective_to IS NULL OR CAST($month AS DATE) < a.effective_to))
  UNION ALL
  SELECT * FROM netted
),
days AS (
  SELECT org_id, program_id, usage_day, CAST(sum(spend_cents(billable, rate_micro, divisor)) AS BIGINT) AS cents
  FROM billed GROUP BY org_id, program_id, usage_day
)
SELECT 'organization' AS scope_kind, coalesce(org_id, '') AS scope_id, CAST(usage_day AS VARCHAR) AS day, CAST(sum(cents) AS BIGINT) AS cents
FROM days GROUP BY org_id, usage_day
UNION ALL
SELECT 'program', program_id, CAST(usage_day AS VARCHAR), cents FROM days WHERE list_contains($programs, program_id)
ORDER BY 1, 2, 3;
