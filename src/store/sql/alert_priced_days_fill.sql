-- Query: alert_priced_days_fill (the alert rules' priced days, src/store/alerts.ts)
-- Parameters: $from VARCHAR, $to VARCHAR (YYYY-MM-DD, exclusive). Inserts the priced daily buckets of
-- the days in [from, to); the caller deletes those days first, in the same transaction.
-- Priced by the joins of the view spend_program_buckets (migration 004): plan period, catalogue, rate
-- in force; read from the bucket table with every filter at the scan. Rows of unpriced metrics are
-- left out (the rules price nothing they cannot), as the spend reports' unpriced lines are.
INSERT INTO alert_priced_days BY NAME
WITH ub AS (
  SELECT * FROM usage_program_buckets
  WHERE granularity = 'daily'
    AND timeframe_start >= CAST(CAST($from AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
    AND timeframe_start < CAST(CAST($to AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC'
),
u AS (
  UNPIVOT ub ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
  INTO NAME metric VALUE value
)
SELECT u.org_id, u.program_id, CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day, p.period_id, p.period_plan,
  min(p.period_start) AS period_start, u.metric, any_value(m.aggregation) AS aggregation, r.rate_id,
  any_value(r.rate_micro) AS rate_micro, any_value(m.divisor) AS divisor,
  CAST(sum(u.value) AS HUGEINT) AS qty, CAST(max(u.value) AS HUGEINT) AS peak,
  CAST(sum(spend_cents(u.value, r.rate_micro, m.divisor)) AS BIGINT) AS cents, CAST(count(*) AS INTEGER) AS bucket_rows
FROM u
JOIN billing_periods p ON p.period_key = u.period_key
JOIN price_metrics m ON m.metric = u.metric
JOIN price_rates r ON r.plan = p.period_plan AND r.metric = u.metric
 AND u.timeframe_start >= r.effective_from AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to)
GROUP BY u.org_id, u.program_id, usage_day, p.period_id, p.period_plan, u.metric, r.rate_id
ORDER BY usage_day, u.program_id;
