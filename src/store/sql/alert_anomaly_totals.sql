-- Query: alert_anomaly_totals (the anomaly rule's input, src/alerts/evaluate.ts)
-- Parameters: $eval_from VARCHAR, $eval_to VARCHAR (YYYY-MM-DD, exclusive: the days evaluated),
-- $baseline_days INTEGER, $min_actual_cents BIGINT, $chunks INTEGER, $chunk INTEGER (the programs whose
-- hash falls in this chunk: a large account is read a chunk at a time, in bounded memory).
-- Daily buckets of priced, summed metrics (gauges are billed on a month's peak, not by day) at list
-- rates before included allowances, so an allowance running out is not an anomaly. A baseline day's
-- usage is priced at the rate the evaluated day has for the metric (the day's own rate when the day
-- has none), so a plan or price change is not one either. One row per program and evaluated day whose
-- spend reaches $min_actual_cents (below it no rule fires): the day's spend, the program's first day
-- with usage in the rows read, and the baseline days that have usage (days without are zero).
-- The chunk's daily bucket rows, read from the bucket table with every filter at the scan, priced by
-- the same joins as the view spend_program_buckets (migration 004): plan period, catalogue, rate in force.
WITH ub AS (
  SELECT * FROM usage_program_buckets
  WHERE granularity = 'daily'
    AND timeframe_start >= CAST(CAST($eval_from AS DATE) - $baseline_days AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND timeframe_start < CAST(CAST($eval_to AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND hash(program_id) % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
),
u AS (
  UNPIVOT ub ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
  INTO NAME metric VALUE value
),
q AS (
  SELECT u.program_id, any_value(u.org_id) AS org_id, CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day, u.metric,
    CAST(sum(u.value) AS HUGEINT) AS qty, max(r.rate_micro) AS rate_micro, any_value(m.divisor) AS divisor,
    CAST(sum(spend_cents(u.value, r.rate_micro, m.divisor)) AS HUGEINT) AS cents
  FROM u
  JOIN billing_periods p ON p.period_key = u.period_key
  JOIN price_metrics m ON m.metric = u.metric AND m.aggregation = 'sum'
  JOIN price_rates r ON r.plan = p.period_plan AND r.metric = u.metric
   AND u.timeframe_start >= r.effective_from AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to)
  GROUP BY u.program_id, usage_day, u.metric
),
first_day AS (SELECT program_id, min(usage_day) AS first_day FROM q GROUP BY program_id),
act AS (
  SELECT program_id, any_value(org_id) AS org_id, usage_day AS day, CAST(sum(cents) AS BIGINT) AS actual
  FROM q WHERE usage_day >= CAST($eval_from AS DATE)
  GROUP BY program_id, usage_day
  HAVING sum(cents) >= $min_actual_cents
),
bl AS (
  SELECT a.program_id, a.day, b.usage_day AS bday,
    CAST(sum(spend_cents(b.qty, coalesce(e.rate_micro, b.rate_micro), coalesce(e.divisor, b.divisor))) AS BIGINT) AS cents
  FROM act a
  JOIN q b ON b.program_id = a.program_id AND b.usage_day < a.day AND b.usage_day >= a.day - $baseline_days
  LEFT JOIN q e ON e.program_id = a.program_id AND e.usage_day = a.day AND e.metric = b.metric
  GROUP BY a.program_id, a.day, b.usage_day
),
bl_days AS (
  SELECT program_id, day, list(struct_pack(day := CAST(bday AS VARCHAR), cents := cents) ORDER BY bday) AS baseline FROM bl GROUP BY program_id, day
)
SELECT a.program_id, a.org_id, CAST(a.day AS VARCHAR) AS day, a.actual, CAST(f.first_day AS VARCHAR) AS first_day,
  coalesce(b.baseline, []) AS baseline
FROM act a JOIN first_day f USING (program_id)
LEFT JOIN bl_days b ON b.program_id = a.program_id AND b.day = a.day
ORDER BY a.program_id, a.day;
