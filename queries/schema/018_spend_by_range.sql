-- Migration 018: the priced daily lines and each month's report granularity for a range of time, as
-- table macros, and the views spend_daily and spend_month_granularity as those macros over all time.
-- A month's lines read only that month's usage (a line never spans a month, allowances are netted per
-- month, and a month's granularity depends on its own coverage; its framework lines go to the frameworks
-- current now, as the view's do), so `export --dataset` stages a month with spend_daily_in(month start,
-- month end) at the cost of that month, not of the whole history.
-- line_id is now numbered within each month, as that month's program_spend.parquet numbers its lines (it
-- was numbered over the whole history, which no report file showed).
-- Parameters: none. The views are replaced with the same columns; their comments are restated.

-- The frameworks a report's framework lines go to are those current at the end of its range: the
-- macros below take that moment apart from the range (frameworks_at), so a month read alone can be
-- split as the whole history's view splits it (current now). The 4-argument macros stay as they were.
CREATE MACRO spend_framework_days_at(g, range_start, range_end, framework_metrics, frameworks_at) AS TABLE
SELECT b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day,
  CAST(sum(b.value) AS HUGEINT) AS qty_raw
FROM spend_framework_buckets b
SEMI JOIN spend_current_frameworks(frameworks_at) c ON c.framework_id = b.framework_id
WHERE b.granularity = g AND b.timeframe_start >= range_start AND b.timeframe_start < range_end
  AND list_contains(framework_metrics, b.metric)
GROUP BY b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day
HAVING sum(b.value) <> 0;

CREATE OR REPLACE MACRO spend_framework_days(g, range_start, range_end, framework_metrics) AS TABLE
SELECT * FROM spend_framework_days_at(g, range_start, range_end, framework_metrics, range_end);

CREATE MACRO spend_daily_report_at(g, range_start, range_end, framework_metrics, frameworks_at) AS TABLE
WITH spl AS (
  SELECT * FROM spend_program_report(g, range_start, range_end)
),
spd AS (
  SELECT row_number() OVER () AS day_key, d.* FROM spend_program_days(g, range_start, range_end) d
),
sfd AS (
  SELECT * FROM spend_framework_days_at(g, range_start, range_end, framework_metrics, frameworks_at)
)
SELECT * FROM spend_day_split('spd', 'spl', 'sfd', framework_metrics);

CREATE OR REPLACE MACRO spend_daily_report(g, range_start, range_end, framework_metrics) AS TABLE
SELECT * FROM spend_daily_report_at(g, range_start, range_end, framework_metrics, range_end);

CREATE MACRO spend_month_granularity_in(range_start, range_end) AS TABLE
WITH months AS (
  SELECT DISTINCT CAST(date_trunc('month', timezone('UTC', timeframe_start)) AS DATE) AS billing_month FROM usage_program
  WHERE timeframe_start >= range_start AND timeframe_start < range_end
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

CREATE OR REPLACE VIEW spend_month_granularity AS
SELECT * FROM spend_month_granularity_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));

CREATE MACRO spend_daily_in(range_start, range_end) AS TABLE
WITH d AS (
  SELECT 'hourly' AS granularity, * FROM spend_daily_report_at('hourly', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'daily' AS granularity, * FROM spend_daily_report_at('daily', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'monthly' AS granularity, * FROM spend_daily_report_at('monthly', range_start, range_end,
    ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'],
    CAST('infinity' AS TIMESTAMPTZ))
)
SELECT d.granularity, d.usage_day, d.billing_month, d.org_id, d.program_id, d.program_name, d.line_type,
       d.framework_id, d.framework_name, d.api_version, d.period_id, d.period_plan, d.metric, d.billing_unit,
       d.quantity_raw, d.quantity, d.allowance, d.billable_quantity, d.rate, d.rate_id, d.cost,
       CASE WHEN NOT d.priced THEN d.note END AS unpriced_reason,
       -- Numbered within the month, as the month's report numbers its lines (every line has a row).
       'P' || dense_rank() OVER (PARTITION BY d.granularity, d.billing_month ORDER BY d.program_line_no) AS line_id
FROM d JOIN spend_month_granularity_in(range_start, range_end) g ON g.billing_month = d.billing_month AND g.granularity = d.granularity;

CREATE OR REPLACE VIEW spend_daily AS
SELECT * FROM spend_daily_in(CAST('-infinity' AS TIMESTAMPTZ), CAST('infinity' AS TIMESTAMPTZ));

-- The views' comments (migrations 005 and 007), which replacing a view drops.
COMMENT ON VIEW spend_daily IS 'Priced lines at daily grain, at the granularity each month''s report reads (spend_month_granularity): every report line''s rounded cost shared out over its days by largest remainder, so a month''s days sum to its program_spend.parquet total and any date range is the sum of its days.';
COMMENT ON VIEW spend_month_granularity IS 'The granularity a report of each billing month reads: the finest whose complete coverage covers the whole month (as the report decides).';
COMMENT ON COLUMN spend_daily.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_daily.usage_day IS 'UTC day of the usage (for monthly data and gauges: the first day of the line)';
COMMENT ON COLUMN spend_daily.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_daily.org_id IS 'organization id (org-...); NULL when the API did not say';
COMMENT ON COLUMN spend_daily.program_id IS 'program id: the API''s project id';
COMMENT ON COLUMN spend_daily.program_name IS 'program name from the inventory (NULL until the inventory has seen it)';
COMMENT ON COLUMN spend_daily.line_type IS 'framework, reconciliation/unattributed (usage no current framework accounts for), or program';
COMMENT ON COLUMN spend_daily.framework_id IS 'framework id: the API''s branch id (br-...)';
COMMENT ON COLUMN spend_daily.framework_name IS 'framework name from the inventory: the API''s branch name';
COMMENT ON COLUMN spend_daily.api_version IS 'v1 (legacy consumption endpoint) or v2';
COMMENT ON COLUMN spend_daily.period_id IS 'plan period id; a bucket straddling a plan change appears once per period';
COMMENT ON COLUMN spend_daily.period_plan IS 'plan of the period (launch, scale, enterprise, free, legacy plans), which the price book prices by';
COMMENT ON COLUMN spend_daily.metric IS 'API metric name; units and divisor in price_metrics';
COMMENT ON COLUMN spend_daily.billing_unit IS 'unit the rate is quoted in (CU-hour, GB-month, GB, ...)';
COMMENT ON COLUMN spend_daily.quantity_raw IS 'exact quantity in the raw unit (sum, or max for gauges)';
COMMENT ON COLUMN spend_daily.quantity IS 'quantity in billing units, 6 decimals, half-up';
COMMENT ON COLUMN spend_daily.allowance IS 'part of the quantity covered by an included allowance, billing units';
COMMENT ON COLUMN spend_daily.billable_quantity IS 'quantity minus allowance, billing units';
COMMENT ON COLUMN spend_daily.rate IS 'currency per billing unit, DECIMAL';
COMMENT ON COLUMN spend_daily.rate_id IS 'price_rates.rate_id of the rate in force; NULL = no rate (unpriced)';
COMMENT ON COLUMN spend_daily.cost IS 'currency, DECIMAL(18,2), rounded once per line half-up; NULL = unpriced';
COMMENT ON COLUMN spend_daily.unpriced_reason IS 'NULL when priced; otherwise why there is no cost (no rate for the plan and metric, or a metric not in the catalogue)';
COMMENT ON COLUMN spend_daily.line_id IS 'the report line a daily row belongs to: P<n> is line n of that month''s program_spend.parquet';
COMMENT ON COLUMN spend_month_granularity.billing_month IS 'first day of the UTC calendar month the usage falls in';
COMMENT ON COLUMN spend_month_granularity.granularity IS 'hourly, daily or monthly; each granularity holds the whole history again: filter on one, never add them up';
COMMENT ON COLUMN spend_month_granularity.complete IS 'true when the granularity''s complete coverage windows cover the whole month';
COMMENT ON COLUMN spend_daily.line_type IS 'framework, unattributed (a framework metric''s usage no current framework accounts for) or no_framework (metrics frameworks do not report, and v1)';
COMMENT ON COLUMN spend_daily.cost IS 'currency, DECIMAL(18,2): the line''s rounded cost allocated by largest remainder, so a line''s rows sum to it; NULL = unpriced';
