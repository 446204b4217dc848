-- Migration 009: the spend macros as stages over named relations, so that a report can materialise
-- each stage once and allocate per chunk of programs in bounded memory (ARCHITECTURE.md, "Reports").
-- Parameters: none. The stage macros take the names of relations (tables, or CTEs of the calling
-- query) through query_table; the macros of 004 and 007 keep their names, parameters, columns and
-- rows, and are now these stages chained, so analysts and reports still share one SQL:
--   spend_lines_of(days)               spend_program_lines over rows of spend_program_days;
--   spend_program_report_of(lines)     spend_program_report over rows of spend_program_lines;
--   spend_framework_days(g, range_start, range_end, framework_metrics)
--                                      the current frameworks' usage per program line key and day;
--   spend_day_split(days, lines, fdays, framework_metrics)
--                                      spend_daily_report over rows of spend_program_days (with a
--                                      day_key column), spend_program_report and spend_framework_days.
--                                      Every window is per day_key or program line, so it may be run
--                                      on the rows of some programs at a time (the allowance is already
--                                      in spend_program_days, taken over whole pools);
--   spend_framework_of(daily)          spend_framework_report over rows of spend_daily_report.

CREATE OR REPLACE MACRO spend_lines_of(days) AS TABLE
WITH l AS (
  SELECT org_id, program_id, api_version, billing_month, period_id, period_plan,
    min(period_start) AS period_start, metric, rate_id,
    any_value(billing_unit) AS billing_unit, any_value(divisor) AS divisor,
    any_value(aggregation) AS aggregation, any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    min(bucket_from) AS line_from, max(bucket_to) AS line_to,
    CAST(sum(qty_raw) AS HUGEINT) AS quantity_raw,
    any_value(allowance_id) AS allowance_id, any_value(included_raw) AS included_raw, any_value(pool_key) AS pool_key,
    CAST(sum(allowance_raw) AS HUGEINT) AS allowance_raw
  FROM query_table(days)
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

CREATE OR REPLACE MACRO spend_program_lines(g, range_start, range_end) AS TABLE
WITH spd AS (SELECT * FROM spend_program_days(g, range_start, range_end))
SELECT * FROM spend_lines_of('spd');

CREATE OR REPLACE MACRO spend_program_report_of(lines) AS TABLE
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
FROM query_table(lines) l
LEFT JOIN programs p ON p.program_id = l.program_id
WHERE l.quantity_raw <> 0
ORDER BY line_no;

CREATE OR REPLACE MACRO spend_program_report(g, range_start, range_end) AS TABLE
WITH spl AS (SELECT * FROM spend_program_lines(g, range_start, range_end))
SELECT * FROM spend_program_report_of('spl');

CREATE OR REPLACE MACRO spend_framework_days(g, range_start, range_end, framework_metrics) AS TABLE
SELECT b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day,
  CAST(sum(b.value) AS HUGEINT) AS qty_raw
FROM spend_framework_buckets b
SEMI JOIN spend_current_frameworks(range_end) c ON c.framework_id = b.framework_id
WHERE b.granularity = g AND b.timeframe_start >= range_start AND b.timeframe_start < range_end
  AND list_contains(framework_metrics, b.metric)
GROUP BY b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day
HAVING sum(b.value) <> 0;

CREATE OR REPLACE MACRO spend_day_split(days, lines, fdays, framework_metrics) AS TABLE
WITH pl AS (
  SELECT line_no, org_id, program_id, program_name, api_version, billing_month, period_id, metric, rate_id, cost, priced, note
  FROM query_table(lines)
),
pd AS (
  SELECT * FROM query_table(days)
),
-- Framework rows count only where the program has the day: the program's data is what is billed.
fx AS (
  SELECT d.day_key, f.framework_id, f.qty_raw
  FROM pd d
  JOIN query_table(fdays) f
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

CREATE OR REPLACE MACRO spend_daily_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH spl AS (
  SELECT * FROM spend_program_report(g, range_start, range_end)
),
spd AS (
  SELECT row_number() OVER () AS day_key, d.* FROM spend_program_days(g, range_start, range_end) d
),
sfd AS (
  SELECT * FROM spend_framework_days(g, range_start, range_end, framework_metrics)
)
SELECT * FROM spend_day_split('spd', 'spl', 'sfd', framework_metrics);

CREATE OR REPLACE MACRO spend_framework_of(daily) AS TABLE
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
  FROM query_table(daily)
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

CREATE OR REPLACE MACRO spend_framework_report(g, range_start, range_end, framework_metrics) AS TABLE
WITH sdr AS (SELECT * FROM spend_daily_report(g, range_start, range_end, framework_metrics))
SELECT * FROM spend_framework_of('sdr');
