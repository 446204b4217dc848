-- Migration 007: one rounding basis for every report.
-- Parameters: none. Replaces the line and detail macros of migration 004 (the views of 004 keep
-- their names and columns and read these macros, so analysts and reports still share one SQL):
--   spend_program_days   the finest priced grain: one row per program line and UTC day (gauges: one
--                        row per line holding its share of the month's peak), with the included
--                        allowance taken in time order as usage accrues (ARCHITECTURE.md, "Reports");
--   spend_program_lines  those rows summed into program_spend's lines, each cost rounded once;
--   spend_daily_report   each line's rounded cost allocated to its days and frameworks by largest
--                        remainder, so the rows of a line add up to the line to the cent;
--   spend_framework_report  the detail summed per line and framework, with explicit lines for the
--                        charges that have no framework, so it adds up to program_spend.
-- Gauges (aggregation 'max', billed on a peak) are charged once per month: the month's peak of the
-- program, shared out between its lines (plan periods, rates) by the share of the month each covers.

CREATE OR REPLACE MACRO spend_program_days(g, range_start, range_end) AS TABLE
WITH b AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id, usage_day,
    min(period_start) AS period_start,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor, any_value(aggregation) AS aggregation,
    any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(timeframe_start) AS bucket_from, max(timeframe_end) AS bucket_to,
    CAST(max(value) AS HUGEINT) AS peak_raw, CAST(sum(value) AS HUGEINT) AS sum_raw
  FROM spend_program_buckets
  WHERE granularity = g AND timeframe_start >= range_start AND timeframe_start < range_end
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id, usage_day
),
-- Gauges: one row per line (period x rate), spanning from its first bucket to the next line's start.
gl AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id,
    min(usage_day) AS usage_day, min(period_start) AS period_start,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor, any_value(aggregation) AS aggregation,
    any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(bucket_from) AS bucket_from, max(bucket_to) AS bucket_to, max(peak_raw) AS line_peak
  FROM b WHERE aggregation = 'max'
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id
),
gspan AS (
  SELECT *,
    max(line_peak) OVER (PARTITION BY org_id, program_id, api_version, billing_month, metric) AS month_peak,
    greatest(bucket_from, range_start) AS charge_from,
    least(coalesce(lead(bucket_from) OVER (PARTITION BY org_id, program_id, api_version, billing_month, metric
                                          ORDER BY bucket_from, period_start, period_id, rate_id NULLS FIRST),
                   bucket_to),
          range_end, timezone('UTC', CAST(billing_month AS TIMESTAMP) + INTERVAL 1 MONTH)) AS charge_to
  FROM gl
),
gw AS (
  SELECT *, CAST(greatest(epoch_ms(charge_to) - epoch_ms(charge_from), 0) AS HUGEINT) AS span_ms
  FROM gspan
),
gshare AS (
  SELECT *,
    CASE WHEN sum(span_ms) OVER m > 0 THEN span_ms ELSE CAST(1 AS HUGEINT) END AS w,
    CASE WHEN sum(span_ms) OVER m > 0 THEN CAST(sum(span_ms) OVER m AS HUGEINT) ELSE CAST(count(*) OVER m AS HUGEINT) END AS w_total
  FROM gw
  WINDOW m AS (PARTITION BY org_id, program_id, api_version, billing_month, metric)
),
gbase AS (
  SELECT *, month_peak * w // w_total AS base_raw, month_peak * w % w_total AS rem_raw FROM gshare
),
grank AS (
  SELECT *,
    month_peak - CAST(sum(base_raw) OVER m AS HUGEINT) AS short_raw,
    row_number() OVER (PARTITION BY org_id, program_id, api_version, billing_month, metric ORDER BY rem_raw DESC, charge_from, period_id, rate_id NULLS FIRST) AS rem_rank
  FROM gbase
  WINDOW m AS (PARTITION BY org_id, program_id, api_version, billing_month, metric)
),
d AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id, usage_day, period_start,
    billing_unit, divisor, coalesce(aggregation, 'sum') AS aggregation, rate, rate_micro, bucket_from, bucket_to,
    CASE WHEN g = 'monthly' THEN greatest(bucket_from, range_start)
         ELSE greatest(timezone('UTC', CAST(usage_day AS TIMESTAMP)), range_start) END AS charge_from,
    CASE WHEN g = 'monthly' THEN least(bucket_to, range_end)
         ELSE least(timezone('UTC', CAST(usage_day AS TIMESTAMP) + INTERVAL 1 DAY), range_end) END AS charge_to,
    sum_raw AS qty_raw
  FROM b WHERE aggregation IS DISTINCT FROM 'max'
  UNION ALL
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id, usage_day, period_start,
    billing_unit, divisor, aggregation, rate, rate_micro, bucket_from, bucket_to, charge_from, charge_to,
    base_raw + CASE WHEN rem_rank <= short_raw THEN 1 ELSE 0 END AS qty_raw
  FROM grank
),
pooled AS (
  SELECT d.*, a.allowance_id, a.included_raw,
         CASE a.scope WHEN 'org_month' THEN coalesce(d.org_id, '') ELSE d.program_id END AS pool_key
  FROM d
  LEFT JOIN price_allowances a
    ON a.plan = d.period_plan AND a.metric = d.metric
   AND d.billing_month >= a.effective_from AND (a.effective_to IS NULL OR d.billing_month < a.effective_to)
)
-- The allowance is used in time order as usage accrues: day by day within its pool (the book's
-- scope x billing month), then by period start, period, rate and program on the same day.
SELECT *,
  CASE WHEN allowance_id IS NULL THEN CAST(0 AS HUGEINT) ELSE
    least(greatest(qty_raw, CAST(0 AS HUGEINT)), greatest(CAST(0 AS HUGEINT), included_raw - coalesce(sum(greatest(qty_raw, CAST(0 AS HUGEINT))) OVER (
      PARTITION BY allowance_id, pool_key, billing_month
      ORDER BY usage_day, charge_from, period_start, period_id, rate_id NULLS FIRST, program_id, metric
      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)))
  END AS allowance_raw
FROM pooled;

-- spend_program_lines(g, range_start, range_end): program spend lines (one program, billing month,
-- period, metric and rate), the sum of their days: exact raw quantity, the allowance taken in time
-- order, the billable remainder and its cost in cents rounded once. cost_cents NULL = unpriced.
CREATE OR REPLACE MACRO spend_program_lines(g, range_start, range_end) AS TABLE
WITH l AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan,
    min(period_start) AS period_start, metric, rate_id,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor,
    any_value(aggregation) AS aggregation, any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(bucket_from) AS line_from, max(bucket_to) AS line_to,
    CAST(sum(qty_raw) AS HUGEINT) AS quantity_raw,
    any_value(allowance_id) AS allowance_id, any_value(included_raw) AS included_raw, any_value(pool_key) AS pool_key,
    CAST(sum(allowance_raw) AS HUGEINT) AS allowance_raw
  FROM spend_program_days(g, range_start, range_end)
  GROUP BY org_id, program_id, api_version, billing_month, period_id, period_plan, metric, rate_id
)
SELECT *,
  quantity_raw - allowance_raw AS billable_raw,
  CASE WHEN rate_micro IS NOT NULL AND divisor IS NOT NULL
       THEN spend_cents(quantity_raw - allowance_raw, rate_micro, divisor) END AS cost_cents,
  CASE WHEN divisor IS NULL THEN 'unpriced: metric ' || metric || ' is not in the price book catalogue'
       WHEN rate_micro IS NULL THEN 'unpriced: no rate for plan ' || period_plan || ' and metric ' || metric
       ELSE NULL END AS unpriced_reason
FROM l;

-- spend_daily_report(g, range_start, range_end, framework_metrics): the detail every other report
-- sums: one row per program_spend line (program_line_no), UTC day (gauges: the line's span) and
-- framework. line_type 'framework' (a current framework's share of the program's day, as the
-- frameworks endpoint reports it), 'unattributed' (the rest of a framework metric: usage no current
-- framework accounts for) or 'no_framework' (metrics frameworks do not report, and v1). The day's
-- allowance goes to its rows in framework_id order, the unattributed row last. The line's rounded
-- cost is allocated over its rows by largest remainder of the billable quantity, so every line's
-- rows sum to it exactly; no row is rounded on its own.
CREATE OR REPLACE MACRO spend_daily_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH pl AS (
  SELECT line_no, org_id, program_id, program_name, api_version, billing_month, period_id, metric, rate_id, cost, priced, note
  FROM spend_program_report(g, range_start, range_end)
),
pd AS (
  SELECT row_number() OVER () AS day_key, d.* FROM spend_program_days(g, range_start, range_end) d
),
fb AS (
  SELECT b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day,
    CAST(sum(b.value) AS HUGEINT) AS qty_raw
  FROM spend_framework_buckets b
  SEMI JOIN spend_current_frameworks(range_end) c ON c.framework_id = b.framework_id
  WHERE b.granularity = g AND b.timeframe_start >= range_start AND b.timeframe_start < range_end
    AND list_contains(framework_metrics, b.metric)
  GROUP BY b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day
  HAVING sum(b.value) <> 0
),
-- Framework rows count only where the program has the day: the program's data is what is billed.
fx AS (
  SELECT d.day_key, f.framework_id, f.qty_raw
  FROM pd d
  JOIN fb f
    ON f.program_id = d.program_id AND f.billing_month = d.billing_month AND f.period_id = d.period_id
   AND f.metric = d.metric AND f.rate_id IS NOT DISTINCT FROM d.rate_id AND f.usage_day = d.usage_day
  WHERE d.api_version = 'v2' AND list_contains(framework_metrics, d.metric) AND d.aggregation <> 'max'
),
fsum AS (
  SELECT day_key, CAST(sum(qty_raw) AS HUGEINT) AS qty_raw FROM fx GROUP BY day_key
),
split AS (
  SELECT day_key, framework_id, 'framework' AS line_type, qty_raw FROM fx
  UNION ALL
  SELECT d.day_key, CAST(NULL AS VARCHAR),
    CASE WHEN d.api_version = 'v2' AND list_contains(framework_metrics, d.metric) THEN 'unattributed' ELSE 'no_framework' END,
    d.qty_raw - coalesce(x.qty_raw, 0)
  FROM pd d LEFT JOIN fsum x ON x.day_key = d.day_key
),
rows AS (
  SELECT d.* EXCLUDE (qty_raw, allowance_raw), s.framework_id, s.line_type, CAST(s.qty_raw AS HUGEINT) AS qty_raw,
    least(greatest(s.qty_raw, CAST(0 AS HUGEINT)), greatest(CAST(0 AS HUGEINT), d.allowance_raw - coalesce(sum(greatest(s.qty_raw, CAST(0 AS HUGEINT))) OVER (
      PARTITION BY s.day_key ORDER BY s.framework_id NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS allowance_raw
  FROM split s JOIN pd d ON d.day_key = s.day_key
),
lined AS (
  SELECT r.*, pl.line_no, pl.program_name, pl.cost AS line_cost, pl.priced, pl.note,
    CAST(coalesce(pl.cost, 0) * 100 AS HUGEINT) AS line_cents,
    greatest(r.qty_raw - r.allowance_raw, CAST(0 AS HUGEINT)) AS w
  FROM rows r
  JOIN pl ON pl.org_id IS NOT DISTINCT FROM r.org_id AND pl.program_id = r.program_id AND pl.api_version = r.api_version
   AND pl.billing_month = r.billing_month AND pl.period_id = r.period_id AND pl.metric = r.metric
   AND pl.rate_id IS NOT DISTINCT FROM r.rate_id
),
shares AS (
  SELECT *,
    CASE WHEN sum(w) OVER l > 0 THEN w ELSE CAST(1 AS HUGEINT) END AS w_eff,
    CASE WHEN sum(w) OVER l > 0 THEN CAST(sum(w) OVER l AS HUGEINT) ELSE CAST(count(*) OVER l AS HUGEINT) END AS w_total
  FROM lined
  WINDOW l AS (PARTITION BY line_no)
),
based AS (
  SELECT *, abs(line_cents) * w_eff // w_total AS base_cents, abs(line_cents) * w_eff % w_total AS remainder FROM shares
),
ranked AS (
  SELECT *,
    abs(line_cents) - CAST(sum(base_cents) OVER (PARTITION BY line_no) AS HUGEINT) AS short_cents,
    row_number() OVER (PARTITION BY line_no ORDER BY remainder DESC, charge_from, framework_id NULLS LAST) AS remainder_rank
  FROM based
),
alloc AS (
  SELECT *, sign(line_cents) * (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END) AS cents FROM ranked
)
SELECT
  'P' || a.line_no AS line_id,
  a.line_no AS program_line_no,
  a.line_type, a.org_id, a.program_id, a.program_name, a.framework_id, f.name AS framework_name, a.api_version,
  a.billing_month, a.period_id, a.period_plan, a.metric, a.billing_unit, a.divisor, a.rate, a.rate_id, a.priced, a.note,
  a.usage_day, a.charge_from, a.charge_to,
  CAST(a.qty_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(a.qty_raw, coalesce(a.divisor, 1)) AS quantity,
  spend_units(a.allowance_raw, coalesce(a.divisor, 1)) AS allowance,
  spend_units(a.qty_raw - a.allowance_raw, coalesce(a.divisor, 1)) AS billable_quantity,
  CASE WHEN a.priced THEN spend_money(a.cents) END AS cost
FROM alloc a
LEFT JOIN frameworks f ON f.framework_id = a.framework_id
WHERE a.qty_raw <> 0 OR a.cents <> 0
ORDER BY a.org_id NULLS FIRST, a.program_id, a.usage_day, a.line_type, a.framework_id NULLS FIRST, a.metric, a.period_id, a.rate_id NULLS FIRST, a.line_no;

-- spend_framework_report(g, range_start, range_end, framework_metrics): the rows of
-- framework_spend.parquet: the detail summed per program line and framework. Every program line
-- appears, so the report adds up to program_spend per program and in total: line_type 'framework',
-- 'unattributed' (a framework metric's usage no current framework accounts for) and 'no_framework'
-- (charges of metrics frameworks do not report, and of v1 programs).
CREATE OR REPLACE MACRO spend_framework_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH s AS (
  SELECT program_line_no, line_type, framework_id,
    any_value(org_id) AS org_id, any_value(program_id) AS program_id, any_value(program_name) AS program_name,
    any_value(framework_name) AS framework_name, any_value(billing_month) AS billing_month,
    any_value(period_id) AS period_id, any_value(period_plan) AS period_plan, any_value(metric) AS metric,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor, any_value(rate) AS rate,
    any_value(rate_id) AS rate_id, bool_and(priced) AS priced, any_value(note) AS note,
    min(charge_from) AS line_from, max(charge_to) AS line_to,
    CAST(sum(quantity_raw) AS HUGEINT) AS qty_raw,
    sum(allowance) AS allowance, sum(billable_quantity) AS billable_quantity,
    sum(cost) AS cost
  FROM spend_daily_report(g, range_start, range_end, framework_metrics)
  GROUP BY program_line_no, line_type, framework_id
)
SELECT
  row_number() OVER (ORDER BY s.org_id NULLS FIRST, s.program_id, s.billing_month, s.line_from, s.period_id, s.metric,
                              s.rate_id NULLS FIRST, s.line_type, s.framework_id) AS line_no,
  s.program_line_no,
  s.org_id,
  s.program_id,
  s.program_name,
  s.line_type,
  s.framework_id,
  s.framework_name,
  s.billing_month,
  s.period_id,
  s.period_plan,
  s.metric,
  s.billing_unit,
  s.line_from,
  s.line_to,
  CAST(s.qty_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(s.qty_raw, coalesce(s.divisor, 1)) AS quantity,
  CAST(s.allowance AS DECIMAL(38,6)) AS allowance,
  CAST(s.billable_quantity AS DECIMAL(38,6)) AS billable_quantity,
  s.rate,
  s.rate_id,
  CAST(s.cost AS DECIMAL(18,2)) AS cost,
  s.priced,
  CASE WHEN NOT s.priced THEN s.note
       WHEN s.line_type = 'unattributed' THEN 'usage of the program no current framework accounts for'
       WHEN s.line_type = 'no_framework' THEN 'a charge frameworks do not report (' || s.metric || ')'
  END AS note
FROM s
ORDER BY line_no;

COMMENT ON VIEW spend_month_framework IS 'Month totals by framework (line_type framework), plus per program the usage no current framework accounts for (unattributed) and the charges frameworks do not report (no_framework), at each month''s report granularity: adds up to spend_month_program.';
COMMENT ON COLUMN spend_daily.line_type IS 'framework, unattributed (a framework metric''s usage no current framework accounts for) or no_framework (metrics frameworks do not report, and v1)';
COMMENT ON COLUMN spend_daily.cost IS 'currency, DECIMAL(18,2): the line''s rounded cost allocated by largest remainder, so a line''s rows sum to it; NULL = unpriced';
COMMENT ON COLUMN spend_lines.note IS 'why a line is unpriced';

-- The finalised FOCUS rows gain the FOCUS 1.2 columns the export now writes, and unpriced rows keep
-- their prices and costs NULL (never 0).
ALTER TABLE report_focus_finalized ADD COLUMN "InvoiceId" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "PricingCategory" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "RegionId" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "RegionName" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "ServiceSubcategory" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "SkuMeter" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "SkuPriceDetails" VARCHAR;
ALTER TABLE report_focus_finalized ADD COLUMN "x_CoverageStatus" VARCHAR;
ALTER TABLE report_focus_finalized ALTER COLUMN "BilledCost" DROP NOT NULL;
ALTER TABLE report_focus_finalized ALTER COLUMN "EffectiveCost" DROP NOT NULL;
ALTER TABLE report_focus_finalized ALTER COLUMN "ListCost" DROP NOT NULL;
ALTER TABLE report_focus_finalized ALTER COLUMN "ContractedCost" DROP NOT NULL;

-- Every file of a finalised month, as finalised: the manifest's files (name, rows, sha256) and the
-- rows of each report table, so that a later export writes the same content and lists the changes
-- since finalisation in a corrections section. Written by src/store/report/finalize.ts.
CREATE TABLE report_finalized_files (
  finalization_id VARCHAR NOT NULL,
  month           VARCHAR NOT NULL,
  name            VARCHAR NOT NULL,
  n_rows          BIGINT  NOT NULL,
  sha256          VARCHAR NOT NULL,
  PRIMARY KEY (finalization_id, name)
);
-- program_spend's lines as finalised: the basis of the corrections section.
CREATE TABLE report_finalized_lines (
  finalization_id VARCHAR NOT NULL,
  month           VARCHAR NOT NULL,
  line_key        VARCHAR NOT NULL,
  org_id          VARCHAR,
  program_id      VARCHAR NOT NULL,
  program_name    VARCHAR,
  period_plan     VARCHAR,
  metric          VARCHAR NOT NULL,
  rate_id         VARCHAR,
  quantity_raw    DECIMAL(38,0) NOT NULL,
  billable_quantity DECIMAL(38,6),
  cost            DECIMAL(18,2),
  PRIMARY KEY (finalization_id, line_key)
);
COMMENT ON TABLE report_finalized_files IS 'The files of each finalised month as finalised (name, rows, sha256): later exports keep their content and add a corrections section.';
COMMENT ON TABLE report_finalized_lines IS 'program_spend lines of each finalised month as finalised: later exports list what changed since (corrections).';
