-- Report: framework_spend
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- Requires src/report/sql/spend.sql. Lines have the program_spend key plus the framework:
--   line_type 'framework':      one current framework (spend_current_frameworks), its quantity priced
--                               with the rate and plan of its bucket; the program line's allowance is
--                               shared out among the program's framework lines in framework_id order.
--   line_type 'reconciliation': one per program line: usage no current framework accounts for
--                               (deleted frameworks, time before framework-level data began):
--                               quantity = program quantity - frameworks' quantities,
--                               cost = program line cost - the framework lines' costs,
--                               so framework lines plus reconciliation equal program_spend exactly.
WITH pl AS (
  SELECT * FROM spend_program_lines($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ))
  WHERE api_version = 'v2' AND list_contains($framework_metrics, metric) AND quantity_raw <> 0
),
fb AS (
  SELECT b.*
  FROM spend_framework_buckets b
  SEMI JOIN spend_current_frameworks(CAST($range_end AS TIMESTAMPTZ)) c ON c.framework_id = b.framework_id
  WHERE b.granularity = $granularity
    AND b.timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND b.timeframe_start < CAST($range_end AS TIMESTAMPTZ)
    AND list_contains($framework_metrics, b.metric)
),
fl AS (
  SELECT
    program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id,
    any_value(org_id) AS org_id, min(period_start) AS period_start,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor,
    any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(timeframe_start) AS line_from, max(timeframe_end) AS line_to,
    CAST(sum(value) AS HUGEINT) AS quantity_raw
  FROM fb
  GROUP BY program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id
  HAVING sum(value) <> 0
),
fa AS (
  SELECT fl.*,
    least(fl.quantity_raw, greatest(CAST(0 AS HUGEINT), coalesce(pl.allowance_raw, 0) - coalesce(sum(fl.quantity_raw) OVER (
      PARTITION BY fl.program_id, fl.billing_month, fl.period_id, fl.metric, fl.rate_id
      ORDER BY fl.framework_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS allowance_raw
  FROM fl
  LEFT JOIN pl
    ON pl.program_id = fl.program_id AND pl.billing_month = fl.billing_month AND pl.period_id = fl.period_id
   AND pl.metric = fl.metric AND pl.rate_id IS NOT DISTINCT FROM fl.rate_id
),
fc AS (
  SELECT fa.*,
    quantity_raw - allowance_raw AS billable_raw,
    CASE WHEN rate_micro IS NOT NULL AND divisor IS NOT NULL
         THEN spend_cents(quantity_raw - allowance_raw, rate_micro, divisor) END AS cost_cents,
    spend_units(quantity_raw, divisor) AS quantity,
    spend_units(allowance_raw, divisor) AS allowance,
    spend_units(quantity_raw - allowance_raw, divisor) AS billable_quantity
  FROM fa
),
fsum AS (
  SELECT program_id, billing_month, period_id, metric, rate_id,
    any_value(org_id) AS org_id, any_value(period_plan) AS period_plan, any_value(billing_unit) AS billing_unit,
    any_value(rate) AS rate, any_value(rate_micro) AS rate_micro, any_value(divisor) AS divisor,
    min(line_from) AS line_from, max(line_to) AS line_to,
    sum(quantity_raw) AS quantity_raw, sum(quantity) AS quantity, sum(allowance) AS allowance,
    sum(billable_quantity) AS billable_quantity, sum(cost_cents) AS cost_cents
  FROM fc
  GROUP BY program_id, billing_month, period_id, metric, rate_id
),
recon AS (
  SELECT
    coalesce(pl.org_id, s.org_id) AS org_id,
    coalesce(pl.program_id, s.program_id) AS program_id,
    CAST(NULL AS VARCHAR) AS framework_id,
    coalesce(pl.billing_month, s.billing_month) AS billing_month,
    coalesce(pl.period_id, s.period_id) AS period_id,
    coalesce(pl.period_plan, s.period_plan) AS period_plan,
    coalesce(pl.metric, s.metric) AS metric,
    coalesce(pl.billing_unit, s.billing_unit) AS billing_unit,
    coalesce(pl.line_from, s.line_from) AS line_from,
    coalesce(pl.line_to, s.line_to) AS line_to,
    coalesce(pl.quantity_raw, 0) - coalesce(s.quantity_raw, 0) AS quantity_raw,
    coalesce(spend_units(pl.quantity_raw, pl.divisor), 0) - coalesce(s.quantity, 0) AS quantity,
    coalesce(spend_units(pl.allowance_raw, pl.divisor), 0) - coalesce(s.allowance, 0) AS allowance,
    coalesce(spend_units(pl.billable_raw, pl.divisor), 0) - coalesce(s.billable_quantity, 0) AS billable_quantity,
    coalesce(pl.rate, s.rate) AS rate,
    coalesce(pl.rate_id, s.rate_id) AS rate_id,
    CASE WHEN coalesce(pl.rate_micro, s.rate_micro) IS NOT NULL AND coalesce(pl.divisor, s.divisor) IS NOT NULL
         THEN coalesce(pl.cost_cents, 0) - coalesce(s.cost_cents, 0) END AS cost_cents
  FROM pl
  FULL OUTER JOIN fsum s
    ON s.program_id = pl.program_id AND s.billing_month = pl.billing_month AND s.period_id = pl.period_id
   AND s.metric = pl.metric AND s.rate_id IS NOT DISTINCT FROM pl.rate_id
),
lines AS (
  SELECT 'framework' AS line_type, org_id, program_id, framework_id, billing_month, period_id, period_plan, metric,
         billing_unit, line_from, line_to, quantity_raw, quantity, allowance, billable_quantity, rate, rate_id, cost_cents
  FROM fc
  UNION ALL
  SELECT 'reconciliation' AS line_type, org_id, program_id, framework_id, billing_month, period_id, period_plan, metric,
         billing_unit, line_from, line_to, quantity_raw, quantity, allowance, billable_quantity, rate, rate_id, cost_cents
  FROM recon
)
SELECT
  row_number() OVER (ORDER BY l.org_id NULLS FIRST, l.program_id, l.billing_month, l.line_from, l.period_id, l.metric,
                              l.rate_id NULLS FIRST, l.line_type, l.framework_id) AS line_no,
  l.org_id,
  l.program_id,
  p.name AS program_name,
  l.line_type,
  l.framework_id,
  f.name AS framework_name,
  l.billing_month,
  l.period_id,
  l.period_plan,
  l.metric,
  l.billing_unit,
  l.line_from,
  l.line_to,
  CAST(l.quantity_raw AS DECIMAL(38,0)) AS quantity_raw,
  CAST(l.quantity AS DECIMAL(38,6)) AS quantity,
  CAST(l.allowance AS DECIMAL(38,6)) AS allowance,
  CAST(l.billable_quantity AS DECIMAL(38,6)) AS billable_quantity,
  l.rate,
  l.rate_id,
  spend_money(l.cost_cents) AS cost,
  l.rate IS NOT NULL AND l.billing_unit IS NOT NULL AS priced,
  CASE WHEN l.billing_unit IS NULL THEN 'unpriced: metric ' || l.metric || ' is not in the price book catalogue'
       WHEN l.rate IS NULL THEN 'unpriced: no rate for plan ' || l.period_plan || ' and metric ' || l.metric
       WHEN l.line_type = 'reconciliation' THEN 'program line minus its current frameworks'' lines'
  END AS note
FROM lines l
LEFT JOIN programs p ON p.program_id = l.program_id
LEFT JOIN frameworks f ON f.framework_id = l.framework_id
ORDER BY line_no;
