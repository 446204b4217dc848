-- Migration 022: the month views of spend over a range, as table macros, and the views as those macros
-- over all time (018 did the same for spend_daily):
--   spend_lines_in(range_start, range_end)            spend_lines for the usage in the range;
--   spend_report_lines_in(range_start, range_end)     those at each month's report granularity (the
--                                                     lines of the months' program_spend.parquet);
--   spend_month_program_in / spend_month_metric_in / spend_month_framework_in(range_start, range_end)
--                                                     the month totals of the months in the range;
--   spend_daily_between(from_day, to_day)             spend_daily for the UTC days from_day (inclusive)
--                                                     to to_day (exclusive), priced from their whole months.
-- The views price every month of the history before a filter on billing_month applies (lines, their
-- allowances and the month's granularity are per month, which no filter passes through), so last
-- month's spend_month_program read a year of hourly usage on a year's database. Pass whole UTC months:
-- a line never spans a month and allowances are netted per month, so a month read alone has the lines,
-- costs and granularity the views give it (line_no aside: it is numbered within the range). Framework
-- lines go to the frameworks current now, as the views' do.
-- spend_month_granularity_in finds the months with usage from their distinct bucket starts instead of
-- converting every row's timestamp (the same months; 6.1 -> 1.2 s for a month of the `large` account).
-- Parameters: none. The views keep their columns; their comments are restated.

CREATE OR REPLACE MACRO spend_month_granularity_in(range_start, range_end) AS TABLE
WITH months AS (
  SELECT DISTINCT CAST(date_trunc('month', timezone('UTC', t)) AS DATE) AS billing_month FROM (
    SELECT DISTINCT timeframe_start AS t FROM usage_program
    WHERE timeframe_start >= range_start AND timeframe_start < range_end)
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

CREATE MACRO spend_lines_in(range_start, range_end) AS TABLE
SELECT 'hourly' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('hourly', range_start, range_end) l
UNION ALL
SELECT 'daily' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('daily', range_start, range_end) l
UNION ALL
SELECT 'monthly' AS granularity, l.*, CASE WHEN NOT l.priced THEN l.note END AS unpriced_reason
FROM spend_program_report('monthly', range_start, range_end) l;

CREATE MACRO spend_report_lines_in(range_start, range_end) AS TABLE
SELECT l.* FROM spend_lines_in(range_start, range_end) l
SEMI JOIN spend_month_granularity_in(range_start, range_end) g ON g.billing_month = l.billing_month AND g.granularity = l.granularity;

CREATE MACRO spend_month_program_in(range_start, range_end) AS TABLE
SELECT l.billing_month, l.granularity, l.org_id, l.program_id, any_value(l.program_name) AS program_name,
       any_value(l.api_version) AS api_version, sum(l.cost) AS cost,
       count(*) AS lines, count(*) FILTER (WHERE NOT l.priced) AS unpriced_lines
FROM spend_report_lines_in(range_start, range_end) l
GROUP BY l.billing_month, l.granularity, l.org_id, l.program_id;

CREATE MACRO spend_month_metric_in(range_start, range_end) AS TABLE
SELECT l.billing_month, l.granularity, l.metric, any_value(m.display_name) AS display_name, any_value(l.billing_unit) AS billing_unit,
       sum(l.quantity) AS quantity, sum(l.billable_quantity) AS billable_quantity, sum(l.cost) AS cost,
       count(*) FILTER (WHERE NOT l.priced) AS unpriced_lines
FROM spend_report_lines_in(range_start, range_end) l
LEFT JOIN price_metrics m ON m.metric = l.metric
GROUP BY l.billing_month, l.granularity, l.metric;

CREATE MACRO spend_daily_between(from_day, to_day) AS TABLE
SELECT * FROM spend_daily_in(timezone('UTC', date_trunc('month', CAST(from_day AS TIMESTAMP))),
                             timezone('UTC', date_trunc('month', CAST(to_day AS TIMESTAMP) - INTERVAL 1 DAY) + INTERVAL 1 MONTH))
WHERE usage_day >= from_day AND usage_day < to_day;

CREATE MACRO spend_framework_report_at(g, range_start, range_end, framework_metrics, frameworks_at) AS TABLE
WITH sdr AS (SELECT * FROM spend_daily_report_at(g, range_start, range_end, framework_metrics, frameworks_at))
SELECT * FROM spend_framework_of('sdr');

CREATE MACRO spend_month_framework_in(range_start, range_end) AS TABLE
WITH f AS (
  SELECT 'hourly' AS granularity, * FROM spend_framework_report_at('hourly', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'daily' AS granularity, * FROM spend_framework_report_at('daily', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'monthly' AS granularity, * FROM spend_framework_report_at('monthly', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
)
SELECT f.billing_month, f.granularity, f.org_id, f.program_id, any_value(f.program_name) AS program_name, f.line_type,
       f.framework_id, any_value(f.framework_name) AS framework_name, sum(f.cost) AS cost,
       count(*) FILTER (WHERE NOT f.priced) AS unpriced_lines
FROM f JOIN spend_month_granularity_in(range_start, range_end) g ON g.billing_month = f.billing_month AND g.granularity = f.granularity
GROUP BY f.billing_month, f.granularity, f.org_id, f.program_id, f.line_type, f.framework_id;

CREATE OR REPLACE VIEW spend_lines AS
SELECT * FROM spend_lines_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));
CREATE OR REPLACE VIEW spend_month_program AS
SELECT * FROM spend_month_program_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));
CREATE OR REPLACE VIEW spend_month_metric AS
SELECT * FROM spend_month_metric_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));
CREATE OR REPLACE VIEW spend_month_framework AS
SELECT * FROM spend_month_framework_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));

-- The views' comments (migrations 004, 005 and 007), which replacing a view drops.
COMMENT ON VIEW spend_lines IS 'The program_spend report lines at every granularity over the whole history (a line never spans a month, allowances are netted per month). Filter on granularity, or join spend_month_granularity.';
COMMENT ON COLUMN spend_lines.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_lines.line_no IS 'line number in report order';
COMMENT ON COLUMN spend_lines.org_id IS 'organization id (org-...); NULL when the API did not say';
COMMENT ON COLUMN spend_lines.program_id IS 'program id: the API''s project id';
COMMENT ON COLUMN spend_lines.program_name IS 'program name from the inventory (NULL until the inventory has seen it)';
COMMENT ON COLUMN spend_lines.api_version IS 'v1 (legacy consumption endpoint) or v2';
COMMENT ON COLUMN spend_lines.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_lines.period_id IS 'plan period id; a bucket straddling a plan change appears once per period';
COMMENT ON COLUMN spend_lines.period_plan IS 'plan of the period (launch, scale, enterprise, free, legacy plans), which the price book prices by';
COMMENT ON COLUMN spend_lines.metric IS 'API metric name; units and divisor in price_metrics';
COMMENT ON COLUMN spend_lines.billing_unit IS 'unit the rate is quoted in (CU-hour, GB-month, GB, ...)';
COMMENT ON COLUMN spend_lines.line_from IS 'first bucket start of the line, UTC';
COMMENT ON COLUMN spend_lines.line_to IS 'last bucket end of the line, UTC';
COMMENT ON COLUMN spend_lines.quantity_raw IS 'exact quantity in the raw unit (sum, or max for gauges)';
COMMENT ON COLUMN spend_lines.quantity IS 'quantity in billing units, 6 decimals, half-up';
COMMENT ON COLUMN spend_lines.allowance IS 'part of the quantity covered by an included allowance, billing units';
COMMENT ON COLUMN spend_lines.billable_quantity IS 'quantity minus allowance, billing units';
COMMENT ON COLUMN spend_lines.rate IS 'currency per billing unit, DECIMAL';
COMMENT ON COLUMN spend_lines.rate_id IS 'price_rates.rate_id of the rate in force; NULL = no rate (unpriced)';
COMMENT ON COLUMN spend_lines.cost IS 'currency, DECIMAL(18,2), rounded once per line half-up; NULL = unpriced';
COMMENT ON COLUMN spend_lines.priced IS 'false when no rate or catalogue entry applies';
COMMENT ON COLUMN spend_lines.note IS 'why a line is unpriced';
COMMENT ON COLUMN spend_lines.unpriced_reason IS 'NULL when priced; otherwise why there is no cost (no rate for the plan and metric, or a metric not in the catalogue)';
COMMENT ON VIEW spend_month_program IS 'Month totals by program, at each month''s report granularity: equal to the month''s program_spend.parquet per program and in total.';
COMMENT ON COLUMN spend_month_program.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_month_program.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_month_program.org_id IS 'organization id (org-...); NULL when the API did not say';
COMMENT ON COLUMN spend_month_program.program_id IS 'program id: the API''s project id';
COMMENT ON COLUMN spend_month_program.program_name IS 'program name from the inventory (NULL until the inventory has seen it)';
COMMENT ON COLUMN spend_month_program.api_version IS 'v1 (legacy consumption endpoint) or v2';
COMMENT ON COLUMN spend_month_program.cost IS 'sum of the month''s rounded line costs (unpriced lines count as nothing; see unpriced_lines)';
COMMENT ON COLUMN spend_month_program.lines IS 'number of report lines';
COMMENT ON COLUMN spend_month_program.unpriced_lines IS 'lines without a rate (cost NULL)';
COMMENT ON VIEW spend_month_metric IS 'Month totals by metric, at each month''s report granularity.';
COMMENT ON COLUMN spend_month_metric.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_month_metric.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_month_metric.metric IS 'API metric name; units and divisor in price_metrics';
COMMENT ON COLUMN spend_month_metric.display_name IS 'name for people';
COMMENT ON COLUMN spend_month_metric.billing_unit IS 'unit the rate is quoted in (CU-hour, GB-month, GB, ...)';
COMMENT ON COLUMN spend_month_metric.quantity IS 'sum of the lines'' quantities in billing units';
COMMENT ON COLUMN spend_month_metric.billable_quantity IS 'sum of the lines'' quantities in billing units';
COMMENT ON COLUMN spend_month_metric.cost IS 'sum of the month''s rounded line costs (unpriced lines count as nothing; see unpriced_lines)';
COMMENT ON COLUMN spend_month_metric.unpriced_lines IS 'lines without a rate (cost NULL)';
COMMENT ON VIEW spend_month_framework IS 'Month totals by framework (line_type framework), plus per program the usage no current framework accounts for (unattributed) and the charges frameworks do not report (no_framework), at each month''s report granularity: adds up to spend_month_program.';
COMMENT ON COLUMN spend_month_framework.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_month_framework.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_month_framework.org_id IS 'organization id (org-...); NULL when the API did not say';
COMMENT ON COLUMN spend_month_framework.program_id IS 'program id: the API''s project id';
COMMENT ON COLUMN spend_month_framework.program_name IS 'program name from the inventory (NULL until the inventory has seen it)';
COMMENT ON COLUMN spend_month_framework.line_type IS 'framework, reconciliation/unattributed (usage no current framework accounts for), or program';
COMMENT ON COLUMN spend_month_framework.framework_id IS 'framework id: the API''s branch id (br-...)';
COMMENT ON COLUMN spend_month_framework.framework_name IS 'framework name from the inventory: the API''s branch name';
COMMENT ON COLUMN spend_month_framework.cost IS 'sum of the month''s rounded line costs (unpriced lines count as nothing; see unpriced_lines)';
COMMENT ON COLUMN spend_month_framework.unpriced_lines IS 'lines without a rate (cost NULL)';
