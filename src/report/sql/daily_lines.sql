-- Query: daily_lines (report input for the FOCUS export, the charts and the forecast; not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[].
-- Requires src/report/sql/spend.sql and this run's rpt_program_spend and rpt_framework_spend.
-- Spreads each report line's rounded cost over the days of its usage, so that daily amounts add up
-- to the workbook exactly:
--   lines = program_spend lines, except the v2 framework metrics, which come from framework_spend
--           instead (framework lines plus reconciliation lines equal the program lines exactly);
--   a day's weight is its billable quantity: the line's included allowance is taken by its earliest
--   days first (the allowance is netted in time order); gauges (aggregation max) weigh each day 1;
--   a line whose days all weigh 0 (a rounding residue) is spread evenly;
--   cents are shared by largest remainder (ties to the earlier day), so each line's days sum to
--   the line's cost to the cent and every total built from days equals the workbook's.
-- One row per line and day; charge_from/charge_to are the UTC day (the month's bucket for monthly data).
-- A gauge (aggregation max: a line is priced on its peak) is not a sum of days: its line is one row
-- spanning the line's buckets, dated on its first day.
WITH
pb AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id,
    min(usage_day) AS usage_day, any_value(aggregation) AS aggregation,
    min(timeframe_start) AS bucket_from, max(timeframe_end) AS bucket_to,
    CASE WHEN any_value(aggregation) = 'max' THEN CAST(max(value) AS HUGEINT) ELSE CAST(sum(value) AS HUGEINT) END AS qty_raw
  FROM spend_program_buckets
  WHERE granularity = $granularity
    AND timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND timeframe_start < CAST($range_end AS TIMESTAMPTZ)
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id,
    CASE WHEN aggregation = 'max' THEN billing_month ELSE usage_day END
),
fb AS (
  SELECT program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id, usage_day,
    min(timeframe_start) AS bucket_from, max(timeframe_end) AS bucket_to,
    CAST(sum(value) AS HUGEINT) AS qty_raw
  FROM spend_framework_buckets
  WHERE granularity = $granularity
    AND timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND timeframe_start < CAST($range_end AS TIMESTAMPTZ)
    AND list_contains($framework_metrics, metric)
  GROUP BY program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id, usage_day
),
-- Program lines that framework_spend does not cover.
p_days AS (
  SELECT 'P' || l.line_no AS line_id, 'program' AS line_type, l.org_id, l.program_id, l.program_name,
    CAST(NULL AS VARCHAR) AS framework_id, CAST(NULL AS VARCHAR) AS framework_name, l.api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, b.aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM rpt_program_spend l
  JOIN pb b
    ON b.org_id IS NOT DISTINCT FROM l.org_id AND b.program_id = l.program_id AND b.api_version = l.api_version
   AND b.billing_month = l.billing_month AND b.period_id = l.period_id AND b.period_plan = l.period_plan
   AND b.metric = l.metric AND b.rate_id IS NOT DISTINCT FROM l.rate_id
  WHERE NOT (l.api_version = 'v2' AND list_contains($framework_metrics, l.metric))
),
-- Framework lines of current frameworks.
f_days AS (
  SELECT 'F' || l.line_no AS line_id, 'framework' AS line_type, l.org_id, l.program_id, l.program_name,
    l.framework_id, l.framework_name, 'v2' AS api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, 'sum' AS aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM rpt_framework_spend l
  JOIN fb b
    ON b.program_id = l.program_id AND b.framework_id = l.framework_id AND b.billing_month = l.billing_month
   AND b.period_id = l.period_id AND b.period_plan = l.period_plan AND b.metric = l.metric
   AND b.rate_id IS NOT DISTINCT FROM l.rate_id
  WHERE l.line_type = 'framework'
),
f_sum AS (
  SELECT b.program_id, b.billing_month, b.period_id, b.period_plan, b.metric, b.rate_id, b.usage_day,
    min(b.bucket_from) AS bucket_from, max(b.bucket_to) AS bucket_to, sum(b.qty_raw) AS qty_raw
  FROM fb b
  SEMI JOIN rpt_framework_spend l
    ON l.line_type = 'framework' AND l.framework_id = b.framework_id AND l.program_id = b.program_id
   AND l.billing_month = b.billing_month AND l.period_id = b.period_id AND l.metric = b.metric
   AND l.rate_id IS NOT DISTINCT FROM b.rate_id
  GROUP BY b.program_id, b.billing_month, b.period_id, b.period_plan, b.metric, b.rate_id, b.usage_day
),
-- Reconciliation lines: the program's days minus its current frameworks' days.
r_base AS (
  SELECT coalesce(p.program_id, f.program_id) AS program_id, coalesce(p.billing_month, f.billing_month) AS billing_month,
    coalesce(p.period_id, f.period_id) AS period_id, coalesce(p.period_plan, f.period_plan) AS period_plan,
    coalesce(p.metric, f.metric) AS metric, coalesce(p.rate_id, f.rate_id) AS rate_id,
    coalesce(p.usage_day, f.usage_day) AS usage_day,
    least(coalesce(p.bucket_from, f.bucket_from), coalesce(f.bucket_from, p.bucket_from)) AS bucket_from,
    greatest(coalesce(p.bucket_to, f.bucket_to), coalesce(f.bucket_to, p.bucket_to)) AS bucket_to,
    coalesce(p.qty_raw, 0) - coalesce(f.qty_raw, 0) AS qty_raw
  FROM (SELECT * FROM pb WHERE api_version = 'v2' AND list_contains($framework_metrics, metric)) p
  FULL OUTER JOIN f_sum f
    ON f.program_id = p.program_id AND f.billing_month = p.billing_month AND f.period_id = p.period_id
   AND f.metric = p.metric AND f.rate_id IS NOT DISTINCT FROM p.rate_id AND f.usage_day = p.usage_day
),
r_days AS (
  SELECT 'F' || l.line_no AS line_id, 'unattributed' AS line_type, l.org_id, l.program_id, l.program_name,
    CAST(NULL AS VARCHAR) AS framework_id, CAST(NULL AS VARCHAR) AS framework_name, 'v2' AS api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, 'sum' AS aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM rpt_framework_spend l
  JOIN r_base b
    ON b.program_id = l.program_id AND b.billing_month = l.billing_month AND b.period_id = l.period_id
   AND b.metric = l.metric AND b.rate_id IS NOT DISTINCT FROM l.rate_id
  WHERE l.line_type = 'reconciliation'
),
days AS (
  SELECT d.*, m.divisor,
    -- The line's allowance in raw units (from its 6-decimal billing-unit figure; used for weights only).
    CASE WHEN m.divisor IS NULL OR d.allowance IS NULL THEN CAST(0 AS HUGEINT)
         ELSE CAST(d.allowance * 1000000 AS HUGEINT) * m.divisor // 1000000 END AS line_allowance_raw,
    CAST(coalesce(d.cost, 0) * 100 AS HUGEINT) AS line_cents
  FROM (SELECT * FROM p_days UNION ALL SELECT * FROM f_days UNION ALL SELECT * FROM r_days) d
  LEFT JOIN price_metrics m ON m.metric = d.metric
),
netted AS (
  SELECT *,
    CASE WHEN aggregation = 'max' THEN CAST(0 AS HUGEINT) ELSE
      least(greatest(qty_raw, CAST(0 AS HUGEINT)), greatest(CAST(0 AS HUGEINT), line_allowance_raw - coalesce(sum(greatest(qty_raw, CAST(0 AS HUGEINT))) OVER (
        PARTITION BY line_id ORDER BY usage_day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)))
    END AS allowance_raw
  FROM days
),
weighted AS (
  SELECT *,
    CASE WHEN aggregation = 'max' THEN CAST(1 AS HUGEINT) ELSE greatest(qty_raw - allowance_raw, CAST(0 AS HUGEINT)) END AS w
  FROM netted
),
shares AS (
  SELECT *,
    CASE WHEN sum(w) OVER (PARTITION BY line_id) > 0 THEN w ELSE CAST(1 AS HUGEINT) END AS w_eff,
    CASE WHEN sum(w) OVER (PARTITION BY line_id) > 0 THEN sum(w) OVER (PARTITION BY line_id)
         ELSE CAST(count(*) OVER (PARTITION BY line_id) AS HUGEINT) END AS w_total
  FROM weighted
),
based AS (
  SELECT *,
    abs(line_cents) * w_eff // w_total AS base_cents,
    abs(line_cents) * w_eff % w_total AS remainder
  FROM shares
),
ranked AS (
  SELECT *,
    abs(line_cents) - sum(base_cents) OVER (PARTITION BY line_id) AS short_cents,
    row_number() OVER (PARTITION BY line_id ORDER BY remainder DESC, usage_day) AS remainder_rank
  FROM based
)
SELECT
  line_id, line_type, org_id, program_id, program_name, framework_id, framework_name, api_version,
  billing_month, period_id, period_plan, metric, billing_unit, divisor, rate, rate_id, priced, note, usage_day,
  CASE WHEN $granularity = 'monthly' OR aggregation = 'max' THEN greatest(bucket_from, CAST($range_start AS TIMESTAMPTZ))
       ELSE greatest(timezone('UTC', CAST(usage_day AS TIMESTAMP)), CAST($range_start AS TIMESTAMPTZ)) END AS charge_from,
  CASE WHEN $granularity = 'monthly' OR aggregation = 'max' THEN least(bucket_to, CAST($range_end AS TIMESTAMPTZ))
       ELSE least(timezone('UTC', CAST(usage_day AS TIMESTAMP) + INTERVAL 1 DAY), CAST($range_end AS TIMESTAMPTZ)) END AS charge_to,
  CAST(qty_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(qty_raw, coalesce(divisor, 1)) AS quantity,
  spend_units(allowance_raw, coalesce(divisor, 1)) AS allowance,
  spend_units(qty_raw - allowance_raw, coalesce(divisor, 1)) AS billable_quantity,
  CASE WHEN priced THEN spend_money(sign(line_cents) * (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END)) END AS cost
FROM ranked
WHERE qty_raw <> 0 OR (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END) <> 0
ORDER BY org_id NULLS FIRST, program_id, usage_day, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id
