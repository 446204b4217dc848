-- Query: spend (views and macros)
-- Parameters: none. Requires the price tables of price_tables.sql, filled from the price book.
-- Creates, for this session:
--   spend_cents(raw, rate_micro, divisor)  cents for `raw` units at rate_micro millionths per
--                                          billing unit, rounded once, half-up (away from zero),
--                                          in exact HUGEINT arithmetic (DuckDB divides DECIMAL by
--                                          DECIMAL in DOUBLE, so money never goes through `/`)
--   spend_money(cents)                     cents as DECIMAL(18,2)
--   spend_units(raw, divisor)              raw units in billing units, DECIMAL(38,6), half-up
--   spend_program_buckets                  every usage_program row with its catalogue entry and the
--                                          rate in force at its timeframe_start for its period_plan
--                                          (rate columns NULL = no rate: unpriced)
--   spend_framework_buckets                the same for usage_framework
-- Analysts: run price_tables.sql, load the price book, then this file; filter the views by
-- granularity (each granularity holds the whole history again, never add them up).
CREATE OR REPLACE TEMP MACRO spend_cents(raw, rate_micro, divisor) AS
  CAST(sign(raw) AS HUGEINT)
    * ((2 * abs(CAST(raw AS HUGEINT)) * CAST(rate_micro AS HUGEINT) + CAST(divisor AS HUGEINT) * 10000)
       // (2 * CAST(divisor AS HUGEINT) * 10000));

CREATE OR REPLACE TEMP MACRO spend_money(cents) AS
  CAST(CAST(cents AS DECIMAL(38,0)) * 0.01 AS DECIMAL(18,2));

CREATE OR REPLACE TEMP MACRO spend_units(raw, divisor) AS
  CAST(CAST(CAST(sign(raw) AS HUGEINT)
         * ((2 * abs(CAST(raw AS HUGEINT)) * 1000000 + CAST(divisor AS HUGEINT)) // (2 * CAST(divisor AS HUGEINT)))
       AS DECIMAL(38,0)) * 0.000001 AS DECIMAL(38,6));

CREATE OR REPLACE TEMP VIEW spend_program_buckets AS
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

CREATE OR REPLACE TEMP VIEW spend_framework_buckets AS
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
CREATE OR REPLACE TEMP MACRO spend_current_frameworks(range_end) AS TABLE
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
CREATE OR REPLACE TEMP MACRO spend_program_lines(g, range_start, range_end) AS TABLE
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
