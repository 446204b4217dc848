-- Migration 023: the daily split with narrow windows, and spend_daily_in at each month's granularity only.
-- spend_day_split (009) carried every column of a day's row through its three windows; on a month of the
-- `large` account (7 M split rows) those windows spilled at 512MB and example 08 took 226 s, or ran out
-- of memory on the analyst copy. The windows now see only the keys, quantities and cents, and the
-- columns are joined back once after them; the rows are the same. The split no longer orders its rows:
-- the report's daily chunk and the export order what they write, and spend_daily_report keeps its order.
-- spend_daily_in priced the month at every granularity and kept one; each granularity now reads usage
-- only when spend_month_granularity_in chooses it for a month of the range (the join keeps a month at its
-- own granularity, as before). line_id is numbered from the month's lines (every line has a day row, so
-- it is the dense rank it was) rather than by a window over every daily row.
-- Parameters: none. Columns and rows of every macro and view are unchanged.

CREATE OR REPLACE MACRO spend_day_split(days, lines, fdays, framework_metrics) AS TABLE
WITH pl AS (
  SELECT line_no, org_id, program_id, program_name, api_version, billing_month, period_id, metric, rate_id, cost, priced, note
  FROM query_table(lines)
),
pd AS (
  SELECT * FROM query_table(days)
),
-- One row per program day with what the windows need of it and of its line.
dk AS (
  SELECT d.day_key, d.qty_raw, d.allowance_raw, d.charge_from, pl.line_no,
    CAST(coalesce(pl.cost, 0) * 100 AS HUGEINT) AS line_cents,
    d.api_version = 'v2' AND list_contains(framework_metrics, d.metric) AS framed,
    d.aggregation <> 'max' AS summed
  FROM pd d
  JOIN pl ON pl.org_id IS NOT DISTINCT FROM d.org_id AND pl.program_id = d.program_id AND pl.api_version = d.api_version
   AND pl.billing_month = d.billing_month AND pl.period_id = d.period_id AND pl.metric = d.metric
   AND pl.rate_id IS NOT DISTINCT FROM d.rate_id
),
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
-- The day's framework rows and the rest of the program's quantity (framework_id NULL); its line_type
-- is derived after the windows.
split AS (
  SELECT day_key, framework_id, qty_raw FROM fx
  UNION ALL
  SELECT k.day_key, CAST(NULL AS VARCHAR), k.qty_raw - coalesce(x.qty_raw, 0)
  FROM dk k LEFT JOIN fsum x ON x.day_key = k.day_key
),
rows AS (
  SELECT s.day_key, s.framework_id, k.line_no, k.line_cents, k.charge_from, CAST(s.qty_raw AS HUGEINT) AS qty_raw,
    least(greatest(s.qty_raw, CAST(0 AS HUGEINT)), greatest(CAST(0 AS HUGEINT), k.allowance_raw - coalesce(sum(greatest(s.qty_raw, CAST(0 AS HUGEINT))) OVER (
      PARTITION BY s.day_key ORDER BY s.framework_id NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0))) AS allowance_raw
  FROM split s JOIN dk k ON k.day_key = s.day_key
),
weighed AS (
  SELECT *, greatest(qty_raw - allowance_raw, CAST(0 AS HUGEINT)) AS w FROM rows
),
shares AS (
  SELECT *,
    CASE WHEN sum(w) OVER l > 0 THEN w ELSE CAST(1 AS HUGEINT) END AS w_eff,
    CASE WHEN sum(w) OVER l > 0 THEN CAST(sum(w) OVER l AS HUGEINT) ELSE CAST(count(*) OVER l AS HUGEINT) END AS w_total
  FROM weighed
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
  SELECT day_key, framework_id, line_no, qty_raw, allowance_raw,
    sign(line_cents) * (base_cents + CASE WHEN remainder_rank <= short_cents THEN 1 ELSE 0 END) AS cents
  FROM ranked
)
SELECT
  'P' || a.line_no AS line_id,
  a.line_no AS program_line_no,
  CASE WHEN a.framework_id IS NOT NULL THEN 'framework'
       WHEN d.api_version = 'v2' AND list_contains(framework_metrics, d.metric) THEN 'unattributed'
       ELSE 'no_framework' END AS line_type,
  d.org_id, d.program_id, pl.program_name, a.framework_id, f.name AS framework_name, d.api_version,
  d.billing_month, d.period_id, d.period_plan, d.metric, d.billing_unit, d.divisor, d.rate, d.rate_id, pl.priced, pl.note,
  d.usage_day, d.charge_from, d.charge_to,
  CAST(a.qty_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(a.qty_raw, coalesce(d.divisor, 1)) AS quantity,
  spend_units(a.allowance_raw, coalesce(d.divisor, 1)) AS allowance,
  spend_units(a.qty_raw - a.allowance_raw, coalesce(d.divisor, 1)) AS billable_quantity,
  CASE WHEN pl.priced THEN spend_money(a.cents) END AS cost
FROM alloc a
JOIN pd d ON d.day_key = a.day_key
JOIN pl ON pl.line_no = a.line_no
LEFT JOIN frameworks f ON f.framework_id = a.framework_id
WHERE a.qty_raw <> 0 OR a.cents <> 0;

CREATE OR REPLACE MACRO spend_daily_report_at(g, range_start, range_end, framework_metrics, frameworks_at) AS TABLE
WITH spl AS (
  SELECT * FROM spend_program_report(g, range_start, range_end)
),
spd AS (
  SELECT row_number() OVER () AS day_key, d.* FROM spend_program_days(g, range_start, range_end) d
),
sfd AS (
  SELECT * FROM spend_framework_days_at(g, range_start, range_end, framework_metrics, frameworks_at)
),
-- The line's number within its month, as the month's report numbers it.
ranks AS (
  SELECT line_no, row_number() OVER (PARTITION BY billing_month ORDER BY line_no) AS month_line_no FROM spl
)
SELECT s.*, r.month_line_no
FROM spend_day_split('spd', 'spl', 'sfd', framework_metrics) s
JOIN ranks r ON r.line_no = s.program_line_no;

CREATE OR REPLACE MACRO spend_daily_report(g, range_start, range_end, framework_metrics) AS TABLE
SELECT * EXCLUDE (month_line_no) FROM spend_daily_report_at(g, range_start, range_end, framework_metrics, range_end)
ORDER BY org_id NULLS FIRST, program_id, usage_day, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, program_line_no;

CREATE OR REPLACE MACRO spend_daily_in(range_start, range_end) AS TABLE
-- A granularity no month of the range is reported at reads no usage (its g is NULL).
WITH d AS (
  SELECT 'hourly' AS granularity, * FROM spend_daily_report_at(
    (SELECT any_value(granularity) FROM spend_month_granularity_in(range_start, range_end) WHERE granularity = 'hourly'),
    range_start, range_end, ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'], CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'daily' AS granularity, * FROM spend_daily_report_at(
    (SELECT any_value(granularity) FROM spend_month_granularity_in(range_start, range_end) WHERE granularity = 'daily'),
    range_start, range_end, ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'], CAST('infinity' AS TIMESTAMPTZ))
  UNION ALL
  SELECT 'monthly' AS granularity, * FROM spend_daily_report_at(
    (SELECT any_value(granularity) FROM spend_month_granularity_in(range_start, range_end) WHERE granularity = 'monthly'),
    range_start, range_end, ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes'], CAST('infinity' AS TIMESTAMPTZ))
)
SELECT d.granularity, d.usage_day, d.billing_month, d.org_id, d.program_id, d.program_name, d.line_type,
       d.framework_id, d.framework_name, d.api_version, d.period_id, d.period_plan, d.metric, d.billing_unit,
       d.quantity_raw, d.quantity, d.allowance, d.billable_quantity, d.rate, d.rate_id, d.cost,
       CASE WHEN NOT d.priced THEN d.note END AS unpriced_reason,
       'P' || d.month_line_no AS line_id
FROM d JOIN spend_month_granularity_in(range_start, range_end) g ON g.billing_month = d.billing_month AND g.granularity = d.granularity;
