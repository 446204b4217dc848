-- Migration 004: spend in the database.
-- Parameters: none. The price book (config/prices.toml) is loaded into real tables by
-- src/report/prices.ts (refreshPrices) whenever its sha256 differs from the loaded one, so the
-- analyst copy carries the rates and the metric catalogue. The spend macros and views below are
-- the very SQL the reports run (src/store/report/sql/program_spend.sql, framework_spend.sql and
-- daily_chunk.sql call the table macros), so a month's total from the views equals the month's
-- program_spend.parquet to the cent. The wide views' metric columns become BIGINT.

CREATE TABLE price_book (
  revision  VARCHAR     NOT NULL,
  currency  VARCHAR     NOT NULL,
  sha256    VARCHAR     NOT NULL,
  path      VARCHAR     NOT NULL,
  loaded_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE price_metrics (
  metric       VARCHAR PRIMARY KEY,
  api_version  VARCHAR NOT NULL,
  display_name VARCHAR NOT NULL,
  raw_unit     VARCHAR NOT NULL,
  billing_unit VARCHAR NOT NULL,
  divisor      HUGEINT NOT NULL,
  aggregation  VARCHAR NOT NULL,
  source       VARCHAR NOT NULL,
  revision     VARCHAR NOT NULL
);
CREATE TABLE price_rates (
  rate_id        VARCHAR PRIMARY KEY,
  plan           VARCHAR NOT NULL,
  metric         VARCHAR NOT NULL,
  rate           DECIMAL(18,6) NOT NULL,
  rate_micro     HUGEINT NOT NULL,
  effective_from TIMESTAMPTZ NOT NULL,
  effective_to   TIMESTAMPTZ,
  unit           VARCHAR NOT NULL,
  source         VARCHAR NOT NULL,
  revision       VARCHAR NOT NULL
);
CREATE TABLE price_allowances (
  allowance_id   VARCHAR NOT NULL,
  plan           VARCHAR NOT NULL,
  metric         VARCHAR NOT NULL,
  included_raw   HUGEINT NOT NULL,
  scope          VARCHAR NOT NULL,
  effective_from DATE NOT NULL,
  effective_to   DATE,
  source         VARCHAR NOT NULL,
  revision       VARCHAR NOT NULL
);

-- The spend arithmetic, buckets and line macros (persistent: the reports and analysts share them).
CREATE OR REPLACE MACRO spend_cents(raw, rate_micro, divisor) AS
  CAST(sign(raw) AS HUGEINT)
    * ((2 * abs(CAST(raw AS HUGEINT)) * CAST(rate_micro AS HUGEINT) + CAST(divisor AS HUGEINT) * 10000)
       // (2 * CAST(divisor AS HUGEINT) * 10000));

CREATE OR REPLACE MACRO spend_money(cents) AS
  CAST(CAST(cents AS DECIMAL(38,0)) * 0.01 AS DECIMAL(18,2));

CREATE OR REPLACE MACRO spend_units(raw, divisor) AS
  CAST(CAST(CAST(sign(raw) AS HUGEINT)
         * ((2 * abs(CAST(raw AS HUGEINT)) * 1000000 + CAST(divisor AS HUGEINT)) // (2 * CAST(divisor AS HUGEINT)))
       AS DECIMAL(38,0)) * 0.000001 AS DECIMAL(38,6));

CREATE OR REPLACE VIEW spend_program_buckets AS
SELECT
  u.api_version, u.granularity, u.org_id, u.program_id, u.period_id, u.period_plan, u.period_start,
  u.timeframe_start, u.timeframe_end,
  CAST(date_trunc('month', timezone('UTC', u.timeframe_start)) AS DATE) AS billing_month,
  CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day,
  u.metric, u.value,
  m.billing_unit, m.divisor, m.aggregation,
  r.rate_id, r.rate, r.rate_micro,
  u.run_id
FROM usage_program u
LEFT JOIN price_metrics m ON m.metric = u.metric
LEFT JOIN price_rates r
  ON r.plan = u.period_plan AND r.metric = u.metric
 AND u.timeframe_start >= r.effective_from
 AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to);

CREATE OR REPLACE VIEW spend_framework_buckets AS
SELECT
  u.granularity, u.org_id, u.program_id, u.framework_id, u.period_id, u.period_plan, u.period_start,
  u.timeframe_start, u.timeframe_end,
  CAST(date_trunc('month', timezone('UTC', u.timeframe_start)) AS DATE) AS billing_month,
  CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day,
  u.metric, u.value,
  m.billing_unit, m.divisor, m.aggregation,
  r.rate_id, r.rate, r.rate_micro,
  u.run_id
FROM usage_framework u
LEFT JOIN price_metrics m ON m.metric = u.metric
LEFT JOIN price_rates r
  ON r.plan = u.period_plan AND r.metric = u.metric
 AND u.timeframe_start >= r.effective_from
 AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to);

-- spend_current_frameworks(range_end): frameworks that count as current for a report ending at
-- range_end: not known (from the inventory) to have been deleted before it. A framework the
-- inventory has not seen yet counts as current. Usage of the others goes to reconciliation lines.
CREATE OR REPLACE MACRO spend_current_frameworks(range_end) AS TABLE
SELECT DISTINCT u.framework_id
FROM usage_framework u
LEFT JOIN frameworks f ON f.framework_id = u.framework_id
WHERE f.deleted_at IS NULL OR f.deleted_at >= range_end;

-- spend_program_lines(g, range_start, range_end): program spend lines from granularity g for
-- buckets with timeframe_start in [range_start, range_end). A line is one program, billing month,
-- period (so one plan), metric and rate (a rate change splits a month), with its exact raw
-- quantity (sum, or max for gauges), the allowance netted from it (in raw units, in time order
-- within the allowance's pool: scope x billing month), the billable remainder and its cost in
-- cents, rounded once. cost_cents is NULL when the line is unpriced.
CREATE OR REPLACE MACRO spend_program_lines(g, range_start, range_end) AS TABLE
WITH lines AS (
  SELECT
    org_id, program_id, api_version, billing_month, period_id, period_plan,
    min(period_start) AS period_start, metric, rate_id,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor,
    any_value(aggregation) AS aggregation, any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(timeframe_start) AS line_from, max(timeframe_end) AS line_to,
    CASE WHEN any_value(aggregation) = 'max' THEN CAST(max(value) AS HUGEINT)
         ELSE CAST(sum(value) AS HUGEINT) END AS quantity_raw
  FROM spend_program_buckets
  WHERE granularity = g AND timeframe_start >= range_start AND timeframe_start < range_end
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id
),
pooled AS (
  SELECT l.*, a.allowance_id, a.included_raw,
         CASE a.scope WHEN 'org_month' THEN coalesce(l.org_id, '') ELSE l.program_id END AS pool_key
  FROM lines l
  LEFT JOIN price_allowances a
    ON a.plan = l.period_plan AND a.metric = l.metric
   AND l.billing_month >= a.effective_from AND (a.effective_to IS NULL OR l.billing_month < a.effective_to)
),
netted AS (
  SELECT *,
    CASE WHEN allowance_id IS NULL THEN CAST(0 AS HUGEINT) ELSE
      least(quantity_raw, greatest(CAST(0 AS HUGEINT), included_raw - coalesce(sum(quantity_raw) OVER (
        PARTITION BY allowance_id, pool_key, billing_month
        ORDER BY line_from, period_start, period_id, rate_id NULLS FIRST, program_id
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)))
    END AS allowance_raw
  FROM pooled
)
SELECT *,
  quantity_raw - allowance_raw AS billable_raw,
  CASE WHEN rate_micro IS NOT NULL AND divisor IS NOT NULL
       THEN spend_cents(quantity_raw - allowance_raw, rate_micro, divisor) END AS cost_cents,
  CASE WHEN divisor IS NULL THEN 'unpriced: metric ' || metric || ' is not in the price book catalogue'
       WHEN rate_micro IS NULL THEN 'unpriced: no rate for plan ' || period_plan || ' and metric ' || metric
       ELSE NULL END AS unpriced_reason
FROM netted;

-- spend_program_report(g, range_start, range_end): the rows of program_spend.parquet (src/store/report/sql/program_spend.sql).
CREATE OR REPLACE MACRO spend_program_report(g, range_start, range_end) AS TABLE
SELECT
  row_number() OVER (ORDER BY l.org_id NULLS FIRST, l.program_id, l.billing_month, l.line_from, l.period_id,
                              l.metric, l.rate_id NULLS FIRST) AS line_no,
  l.org_id,
  l.program_id,
  p.name AS program_name,
  l.api_version,
  l.billing_month,
  l.period_id,
  l.period_plan,
  l.metric,
  l.billing_unit,
  l.line_from,
  l.line_to,
  CAST(l.quantity_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(l.quantity_raw, l.divisor) AS quantity,
  spend_units(l.allowance_raw, l.divisor) AS allowance,
  spend_units(l.billable_raw, l.divisor) AS billable_quantity,
  l.rate,
  l.rate_id,
  spend_money(l.cost_cents) AS cost,
  l.unpriced_reason IS NULL AS priced,
  l.unpriced_reason AS note
FROM spend_program_lines(g, range_start, range_end) l
LEFT JOIN programs p ON p.program_id = l.program_id
WHERE l.quantity_raw <> 0
ORDER BY line_no;

-- spend_framework_report(g, range_start, range_end, framework_metrics): the rows of framework_spend.parquet.
CREATE OR REPLACE MACRO spend_framework_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH pl AS (
  SELECT * FROM spend_program_lines(g, range_start, range_end)
  WHERE api_version = 'v2' AND list_contains(framework_metrics, metric) AND quantity_raw <> 0
),
fb AS (
  SELECT b.*
  FROM spend_framework_buckets b
  SEMI JOIN spend_current_frameworks(range_end) c ON c.framework_id = b.framework_id
  WHERE b.granularity = g
    AND b.timeframe_start >= range_start AND b.timeframe_start < range_end
    AND list_contains(framework_metrics, b.metric)
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

-- spend_daily_report(g, range_start, range_end, framework_metrics): each report line's rounded cost
-- spread over its days by largest remainder (the rows behind the FOCUS export, charts and forecast).
CREATE OR REPLACE MACRO spend_daily_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH
pb AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id,
    min(usage_day) AS usage_day, any_value(aggregation) AS aggregation,
    min(timeframe_start) AS bucket_from, max(timeframe_end) AS bucket_to,
    CASE WHEN any_value(aggregation) = 'max' THEN CAST(max(value) AS HUGEINT) ELSE CAST(sum(value) AS HUGEINT) END AS qty_raw
  FROM spend_program_buckets
  WHERE granularity = g
    AND timeframe_start >= range_start AND timeframe_start < range_end
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id,
    CASE WHEN aggregation = 'max' THEN billing_month ELSE usage_day END
),
fb AS (
  SELECT program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id, usage_day,
    min(timeframe_start) AS bucket_from, max(timeframe_end) AS bucket_to,
    CAST(sum(value) AS HUGEINT) AS qty_raw
  FROM spend_framework_buckets
  WHERE granularity = g
    AND timeframe_start >= range_start AND timeframe_start < range_end
    AND list_contains(framework_metrics, metric)
  GROUP BY program_id, framework_id, billing_month, period_id, period_plan, metric, rate_id, usage_day
),
-- Program lines that framework_spend does not cover.
p_days AS (
  SELECT 'P' || l.line_no AS line_id, 'program' AS line_type, l.org_id, l.program_id, l.program_name,
    CAST(NULL AS VARCHAR) AS framework_id, CAST(NULL AS VARCHAR) AS framework_name, l.api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, b.aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM spend_program_report(g, range_start, range_end) l
  JOIN pb b
    ON b.org_id IS NOT DISTINCT FROM l.org_id AND b.program_id = l.program_id AND b.api_version = l.api_version
   AND b.billing_month = l.billing_month AND b.period_id = l.period_id AND b.period_plan = l.period_plan
   AND b.metric = l.metric AND b.rate_id IS NOT DISTINCT FROM l.rate_id
  WHERE NOT (l.api_version = 'v2' AND list_contains(framework_metrics, l.metric))
),
-- Framework lines of current frameworks.
f_days AS (
  SELECT 'F' || l.line_no AS line_id, 'framework' AS line_type, l.org_id, l.program_id, l.program_name,
    l.framework_id, l.framework_name, 'v2' AS api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, 'sum' AS aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM spend_framework_report(g, range_start, range_end, framework_metrics) l
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
  SEMI JOIN spend_framework_report(g, range_start, range_end, framework_metrics) l
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
  FROM (SELECT * FROM pb WHERE api_version = 'v2' AND list_contains(framework_metrics, metric)) p
  FULL OUTER JOIN f_sum f
    ON f.program_id = p.program_id AND f.billing_month = p.billing_month AND f.period_id = p.period_id
   AND f.metric = p.metric AND f.rate_id IS NOT DISTINCT FROM p.rate_id AND f.usage_day = p.usage_day
),
r_days AS (
  SELECT 'F' || l.line_no AS line_id, 'unattributed' AS line_type, l.org_id, l.program_id, l.program_name,
    CAST(NULL AS VARCHAR) AS framework_id, CAST(NULL AS VARCHAR) AS framework_name, 'v2' AS api_version,
    l.billing_month, l.period_id, l.period_plan, l.metric, l.billing_unit, l.rate, l.rate_id, l.priced, l.note,
    l.cost, l.allowance, 'sum' AS aggregation, b.usage_day, b.bucket_from, b.bucket_to, b.qty_raw
  FROM spend_framework_report(g, range_start, range_end, framework_metrics) l
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
  CASE WHEN g = 'monthly' OR aggregation = 'max' THEN greatest(bucket_from, range_start)
       ELSE greatest(timezone('UTC', CAST(usage_day AS TIMESTAMP)), range_start) END AS charge_from,
  CASE WHEN g = 'monthly' OR aggregation = 'max' THEN least(bucket_to, range_end)
       ELSE least(timezone('UTC', CAST(usage_day AS TIMESTAMP) + INTERVAL 1 DAY), range_end) END AS charge_to,
  CAST(qty_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(qty_raw, coalesce(divisor, 1)) AS quantity,
  spend_units(allowance_raw, coalesce(divisor, 1)) AS allowance,
  spend_units(qty_raw - allowance_raw, coalesce(divisor, 1)) AS billable_quantity,
  CASE WHEN priced THEN spend_money(sign(line_cents) * (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END)) END AS cost
FROM ranked
WHERE qty_raw <> 0 OR (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END) <> 0
ORDER BY org_id NULLS FIRST, program_id, usage_day, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id;

-- The granularity a report of each billing month reads (src/report/coverage.ts, in SQL): the finest
-- whose 'complete' coverage windows cover the whole month for every (source, scope) collected at
-- it (scopes that were only ever not_eligible do not count); when none is complete, the one that
-- covers most of the month, finer on a tie.
CREATE VIEW spend_month_granularity AS
WITH months AS (
  SELECT DISTINCT CAST(date_trunc('month', timezone('UTC', timeframe_start)) AS DATE) AS billing_month FROM usage_program
),
bounds AS (
  SELECT billing_month, timezone('UTC', CAST(billing_month AS TIMESTAMP)) AS ms,
         timezone('UTC', CAST(billing_month AS TIMESTAMP) + INTERVAL 1 MONTH) AS me
  FROM months
),
c AS (
  SELECT b.billing_month, b.ms, b.me, v.source, v.granularity, v.scope, v.status,
         greatest(v.window_start, b.ms) AS s, least(v.window_end, b.me) AS e
  FROM bounds b JOIN coverage v ON v.window_start < b.me AND v.window_end > b.ms
),
req AS (
  SELECT billing_month, source, scope FROM c GROUP BY ALL HAVING bool_or(status <> 'not_eligible')
),
ordered AS (
  SELECT *, max(e) OVER (PARTITION BY billing_month, source, granularity, scope ORDER BY s, e
                         ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM c WHERE status = 'complete'
),
islands AS (
  SELECT *, sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END) OVER (
    PARTITION BY billing_month, source, granularity, scope ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM ordered
),
merged AS (
  SELECT billing_month, source, granularity, scope, island, min(s) AS s, max(e) AS e FROM islands GROUP BY ALL
),
covered AS (
  SELECT billing_month, source, granularity, scope, sum(epoch_ms(e) - epoch_ms(s)) AS covered_ms FROM merged GROUP BY ALL
),
scoped AS (
  SELECT DISTINCT c.billing_month, c.source, c.granularity, c.scope,
         epoch_ms(c.me) - epoch_ms(c.ms) AS range_ms, coalesce(cv.covered_ms, 0) AS covered_ms
  FROM c
  SEMI JOIN req r ON r.billing_month = c.billing_month AND r.source = c.source AND r.scope = c.scope
  LEFT JOIN covered cv ON cv.billing_month = c.billing_month AND cv.source = c.source
   AND cv.granularity = c.granularity AND cv.scope = c.scope
),
scored AS (
  SELECT billing_month, granularity,
         bool_and(covered_ms >= range_ms) AS complete,
         sum(least(covered_ms, range_ms)) AS covered_ms,
         CASE granularity WHEN 'hourly' THEN 1 WHEN 'daily' THEN 2 ELSE 3 END AS fineness
  FROM scoped GROUP BY billing_month, granularity
)
SELECT billing_month, granularity, complete
FROM scored
QUALIFY row_number() OVER (PARTITION BY billing_month ORDER BY complete DESC, CASE WHEN complete THEN 0 ELSE covered_ms END DESC, fineness) = 1;

-- Program lines at every granularity over the whole history (a line never spans a billing month,
-- and allowances are netted per month, so each month's lines are the month's report lines).
CREATE VIEW spend_lines AS
SELECT 'hourly' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('hourly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ)) l
UNION ALL
SELECT 'daily' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('daily', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ)) l
UNION ALL
SELECT 'monthly' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('monthly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ)) l;

-- Priced lines at daily grain, at the granularity each month's report reads.
CREATE VIEW spend_daily AS
WITH d AS (
  SELECT 'hourly' AS granularity, * FROM spend_daily_report('hourly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
  UNION ALL
  SELECT 'daily' AS granularity, * FROM spend_daily_report('daily', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
  UNION ALL
  SELECT 'monthly' AS granularity, * FROM spend_daily_report('monthly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
)
SELECT d.granularity, d.usage_day, d.billing_month, d.org_id, d.program_id, d.program_name, d.line_type,
       d.framework_id, d.framework_name, d.api_version, d.period_id, d.period_plan, d.metric, d.billing_unit,
       d.quantity_raw, d.quantity, d.allowance, d.billable_quantity, d.rate, d.rate_id, d.cost,
       CASE WHEN NOT d.priced THEN d.note END AS unpriced_reason, d.line_id
FROM d JOIN spend_month_granularity g ON g.billing_month = d.billing_month AND g.granularity = d.granularity;

-- Month totals by program, at the granularity each month's report reads: equal to the sum of the
-- cost column of that month's program_spend.parquet.
CREATE VIEW spend_month_program AS
SELECT l.billing_month, l.granularity, l.org_id, l.program_id, any_value(l.program_name) AS program_name,
       any_value(l.api_version) AS api_version, sum(l.cost) AS cost,
       count(*) AS lines, count(*) FILTER (WHERE NOT l.priced) AS unpriced_lines
FROM spend_lines l JOIN spend_month_granularity g ON g.billing_month = l.billing_month AND g.granularity = l.granularity
GROUP BY l.billing_month, l.granularity, l.org_id, l.program_id;

-- Month totals by metric (billing units), at the granularity each month's report reads.
CREATE VIEW spend_month_metric AS
SELECT l.billing_month, l.granularity, l.metric, any_value(m.display_name) AS display_name, any_value(l.billing_unit) AS billing_unit,
       sum(l.quantity) AS quantity, sum(l.billable_quantity) AS billable_quantity, sum(l.cost) AS cost,
       count(*) FILTER (WHERE NOT l.priced) AS unpriced_lines
FROM spend_lines l JOIN spend_month_granularity g ON g.billing_month = l.billing_month AND g.granularity = l.granularity
LEFT JOIN price_metrics m ON m.metric = l.metric
GROUP BY l.billing_month, l.granularity, l.metric;

-- Month totals by framework (v2 framework metrics): framework lines, plus one reconciliation row
-- per program (framework_id NULL) for usage no current framework accounts for. "Current" here
-- means not deleted today (a month's report counts frameworks deleted after the month as current).
CREATE VIEW spend_month_framework AS
WITH f AS (
  SELECT 'hourly' AS granularity, * FROM spend_framework_report('hourly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
  UNION ALL
  SELECT 'daily' AS granularity, * FROM spend_framework_report('daily', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
  UNION ALL
  SELECT 'monthly' AS granularity, * FROM spend_framework_report('monthly', CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ),
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'])
)
SELECT f.billing_month, f.granularity, f.org_id, f.program_id, any_value(f.program_name) AS program_name, f.line_type,
       f.framework_id, any_value(f.framework_name) AS framework_name, sum(f.cost) AS cost,
       count(*) FILTER (WHERE NOT f.priced) AS unpriced_lines
FROM f JOIN spend_month_granularity g ON g.billing_month = f.billing_month AND g.granularity = f.granularity
GROUP BY f.billing_month, f.granularity, f.org_id, f.program_id, f.line_type, f.framework_id;

-- The wide views with BIGINT metric columns (a sum of BIGINT is HUGEINT, which pandas and Arrow
-- handle poorly; each cell is one reported value, so it fits).
CREATE OR REPLACE VIEW usage_program_wide AS
SELECT api_version, granularity, org_id, program_id, period_id, period_plan, timeframe_start, timeframe_end,
       CAST(sum(value) FILTER (WHERE metric = 'compute_unit_seconds') AS BIGINT)           AS compute_unit_seconds,
       CAST(sum(value) FILTER (WHERE metric = 'root_branch_bytes_month') AS BIGINT)        AS root_branch_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'child_branch_bytes_month') AS BIGINT)       AS child_branch_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'instant_restore_bytes_month') AS BIGINT)    AS instant_restore_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'public_network_transfer_bytes') AS BIGINT)  AS public_network_transfer_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'private_network_transfer_bytes') AS BIGINT) AS private_network_transfer_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'extra_branches_month') AS BIGINT)           AS extra_branches_month,
       CAST(sum(value) FILTER (WHERE metric = 'snapshot_storage_bytes_month') AS BIGINT)   AS snapshot_storage_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'active_time_seconds') AS BIGINT)            AS active_time_seconds,
       CAST(sum(value) FILTER (WHERE metric = 'compute_time_seconds') AS BIGINT)           AS compute_time_seconds,
       CAST(sum(value) FILTER (WHERE metric = 'written_data_bytes') AS BIGINT)             AS written_data_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'synthetic_storage_size_bytes') AS BIGINT)   AS synthetic_storage_size_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'data_storage_bytes_hour') AS BIGINT)        AS data_storage_bytes_hour,
       CAST(sum(value) FILTER (WHERE metric = 'logical_size_bytes') AS BIGINT)             AS logical_size_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'logical_size_bytes_hour') AS BIGINT)        AS logical_size_bytes_hour
FROM usage_program
GROUP BY ALL;

CREATE OR REPLACE VIEW usage_framework_wide AS
SELECT granularity, org_id, program_id, framework_id, period_id, period_plan, timeframe_start, timeframe_end,
       CAST(sum(value) FILTER (WHERE metric = 'compute_unit_seconds') AS BIGINT)           AS compute_unit_seconds,
       CAST(sum(value) FILTER (WHERE metric = 'root_branch_bytes_month') AS BIGINT)        AS root_branch_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'child_branch_bytes_month') AS BIGINT)       AS child_branch_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'instant_restore_bytes_month') AS BIGINT)    AS instant_restore_bytes_month,
       CAST(sum(value) FILTER (WHERE metric = 'public_network_transfer_bytes') AS BIGINT)  AS public_network_transfer_bytes,
       CAST(sum(value) FILTER (WHERE metric = 'private_network_transfer_bytes') AS BIGINT) AS private_network_transfer_bytes
FROM usage_framework
GROUP BY ALL;

-- What `export --dataset` last wrote: one row per partition, with the fingerprint of its rows.
CREATE TABLE export_partitions (
  dataset_dir  VARCHAR     NOT NULL,
  partition    VARCHAR     NOT NULL,
  fingerprint  VARCHAR     NOT NULL,
  n_rows       BIGINT      NOT NULL,
  sha256       VARCHAR     NOT NULL,
  exported_at  TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (dataset_dir, partition)
);
