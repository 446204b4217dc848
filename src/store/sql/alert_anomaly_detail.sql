-- Query: alert_anomaly_detail (an anomaly's contributions, src/alerts/evaluate.ts)
-- Parameters: $eval_from VARCHAR, $eval_to VARCHAR (YYYY-MM-DD), $baseline_days INTEGER,
-- $keys VARCHAR[] (program_id || '|' || day of the anomalies found by alert_anomaly_totals.sql),
-- $chunks INTEGER, $chunk INTEGER (as in alert_anomaly_totals.sql; 1 and 0 read every program).
-- The same pricing as alert_anomaly_totals.sql, per metric: the day's spend (bday = day) and each
-- baseline day's usage priced at the day's rates.
-- The chunk's daily bucket rows, read from the bucket table with every filter at the scan, priced by
-- the same joins as the view spend_program_buckets (migration 004): plan period, catalogue, rate in force.
WITH ub AS (
  SELECT * FROM usage_program_buckets
  WHERE granularity = 'daily'
    AND timeframe_start >= CAST(CAST($eval_from AS DATE) - $baseline_days AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND timeframe_start < CAST(CAST($eval_to AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND hash(program_id) % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)
    AND list_contains(list_transform($keys, k -> split_part(k, '|', 1)), program_id)
),
u AS (
  UNPIVOT ub ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
  INTO NAME metric VALUE value
),
q AS MATERIALIZED (
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
k AS (SELECT split_part(key, '|', 1) AS program_id, CAST(split_part(key, '|', 2) AS DATE) AS day FROM unnest($keys) t(key))
SELECT k.program_id, CAST(k.day AS VARCHAR) AS day, CAST(b.usage_day AS VARCHAR) AS bday, b.metric,
  CAST(CASE WHEN b.usage_day = k.day THEN b.cents
       ELSE spend_cents(b.qty, coalesce(e.rate_micro, b.rate_micro), coalesce(e.divisor, b.divisor)) END AS BIGINT) AS cents
FROM k
JOIN q b ON b.program_id = k.program_id AND b.usage_day <= k.day AND b.usage_day >= k.day - $baseline_days
LEFT JOIN q e ON e.program_id = k.program_id AND e.usage_day = k.day AND e.metric = b.metric
ORDER BY k.program_id, k.day, b.usage_day, b.metric;
