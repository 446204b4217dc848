-- Report: transfer
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- Requires the spend views of migration 004 (queries/schema/004_spend_in_database.sql). Public and private transfer per organization, program, day,
-- period (plan), rate and framework: one row per current framework (spend_current_frameworks) and
-- one 'unattributed' row (framework_id NULL) for the program's usage no current framework accounts
-- for. Allowances are netted in time order: per pool (the book's scope x billing month) the
-- program-day groups consume it by day, then period; within a group the framework rows by
-- framework_id, then the unattributed row. Each row's cost is rounded to cents once (half-up).
-- With monthly data the day is the first of the month.
WITH pb AS (
  SELECT
    org_id, program_id, billing_month, usage_day, period_id, period_plan, metric, rate_id,
    min(period_start) AS period_start,
    any_value(divisor) AS divisor, any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    CAST(sum(value) AS HUGEINT) AS quantity_raw
  FROM spend_program_buckets
  WHERE granularity = $granularity
    AND timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND timeframe_start < CAST($range_end AS TIMESTAMPTZ)
    AND metric IN ('public_network_transfer_bytes', 'private_network_transfer_bytes')
  GROUP BY org_id, program_id, billing_month, usage_day, period_id, period_plan, metric, rate_id
),
pooled AS (
  SELECT pb.*, a.allowance_id, a.included_raw,
         CASE a.scope WHEN 'org_month' THEN coalesce(pb.org_id, '') ELSE pb.program_id END AS pool_key
  FROM pb
  LEFT JOIN price_allowances a
    ON a.plan = pb.period_plan AND a.metric = pb.metric
   AND pb.billing_month >= a.effective_from AND (a.effective_to IS NULL OR pb.billing_month < a.effective_to)
),
grp AS (
  SELECT *,
    CASE WHEN allowance_id IS NULL THEN CAST(0 AS HUGEINT) ELSE
      least(quantity_raw, greatest(CAST(0 AS HUGEINT), included_raw - coalesce(sum(quantity_raw) OVER (
        PARTITION BY allowance_id, pool_key, billing_month
        ORDER BY usage_day, period_start, period_id, rate_id NULLS FIRST, program_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)))
    END AS allowance_raw
  FROM pooled
),
fb AS (
  SELECT program_id, framework_id, usage_day, period_id, metric, rate_id, CAST(sum(value) AS HUGEINT) AS quantity_raw
  FROM spend_framework_buckets b
  SEMI JOIN spend_current_frameworks(CAST($range_end AS TIMESTAMPTZ)) c ON c.framework_id = b.framework_id
  WHERE b.granularity = $granularity
    AND b.timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND b.timeframe_start < CAST($range_end AS TIMESTAMPTZ)
    AND b.metric IN ('public_network_transfer_bytes', 'private_network_transfer_bytes')
  GROUP BY program_id, framework_id, usage_day, period_id, metric, rate_id
  HAVING sum(value) <> 0
),
fa AS (
  -- Framework rows take their group's row (org, plan, rate, allowance); a framework row with no
  -- program row in the database is left to the program data, which is what is billed.
  SELECT g.org_id, g.program_id, fb.framework_id, g.usage_day, g.period_id, g.period_plan, g.metric, g.rate_id,
    g.divisor, g.rate, g.rate_micro, fb.quantity_raw,
    least(fb.quantity_raw, greatest(CAST(0 AS HUGEINT), g.allowance_raw - coalesce(sum(fb.quantity_raw) OVER (
      PARTITION BY fb.program_id, fb.usage_day, fb.period_id, fb.metric, fb.rate_id
      ORDER BY fb.framework_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS allowance_raw
  FROM fb
  JOIN grp g
    ON g.program_id = fb.program_id AND g.usage_day = fb.usage_day AND g.period_id = fb.period_id
   AND g.metric = fb.metric AND g.rate_id IS NOT DISTINCT FROM fb.rate_id
),
fsum AS (
  SELECT program_id, usage_day, period_id, metric, rate_id,
    sum(quantity_raw) AS quantity_raw, sum(allowance_raw) AS allowance_raw
  FROM fa
  GROUP BY program_id, usage_day, period_id, metric, rate_id
),
rows AS (
  SELECT org_id, program_id, framework_id, usage_day, period_id, period_plan, metric, rate_id, divisor, rate,
         rate_micro, quantity_raw, allowance_raw
  FROM fa
  UNION ALL
  SELECT g.org_id, g.program_id, CAST(NULL AS VARCHAR), g.usage_day, g.period_id, g.period_plan, g.metric, g.rate_id,
         g.divisor, g.rate, g.rate_micro,
         CAST(g.quantity_raw - coalesce(s.quantity_raw, 0) AS HUGEINT),
         CAST(g.allowance_raw - coalesce(s.allowance_raw, 0) AS HUGEINT)
  FROM grp g
  LEFT JOIN fsum s
    ON s.program_id = g.program_id AND s.usage_day = g.usage_day AND s.period_id = g.period_id
   AND s.metric = g.metric AND s.rate_id IS NOT DISTINCT FROM g.rate_id
)
SELECT
  row_number() OVER (ORDER BY r.org_id NULLS FIRST, r.program_id, r.usage_day, r.period_id, r.metric,
                              r.rate_id NULLS FIRST, r.framework_id NULLS LAST) AS line_no,
  r.org_id,
  r.program_id,
  p.name AS program_name,
  CASE WHEN r.framework_id IS NULL THEN 'unattributed' ELSE 'framework' END AS attribution,
  r.framework_id,
  f.name AS framework_name,
  r.usage_day AS day,
  r.period_id,
  r.period_plan,
  r.metric,
  CAST(r.quantity_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(r.quantity_raw, r.divisor) AS quantity_gb,
  spend_units(r.allowance_raw, r.divisor) AS allowance_gb,
  spend_units(r.quantity_raw - r.allowance_raw, r.divisor) AS billable_gb,
  r.rate,
  r.rate_id,
  spend_money(CASE WHEN r.rate_micro IS NOT NULL AND r.divisor IS NOT NULL
                   THEN spend_cents(r.quantity_raw - r.allowance_raw, r.rate_micro, r.divisor) END) AS cost,
  r.rate_micro IS NOT NULL AND r.divisor IS NOT NULL AS priced,
  CASE WHEN r.divisor IS NULL THEN 'unpriced: metric ' || r.metric || ' is not in the price book catalogue'
       WHEN r.rate_micro IS NULL THEN 'unpriced: no rate for plan ' || r.period_plan || ' and metric ' || r.metric
  END AS note
FROM rows r
LEFT JOIN programs p ON p.program_id = r.program_id
LEFT JOIN frameworks f ON f.framework_id = r.framework_id
WHERE r.quantity_raw <> 0
ORDER BY line_no;
