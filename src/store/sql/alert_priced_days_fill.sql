-- Query: alert_priced_days_fill (the alert rules' priced days, src/store/alerts.ts)
-- Parameters: $chunks INTEGER, $chunk INTEGER. Inserts the daily buckets of alert_fill_buckets (a TEMP
-- table the caller fills with the rows to price: src/store/alerts.ts) of the programs whose hash falls
-- in this chunk, priced; the caller deletes their keys first, in the same transaction. (A row is about
-- a group of the aggregate per metric reported: read in chunks, the aggregate stays small.)
-- Priced by the joins of the view spend_program_buckets (migration 004): plan period, catalogue, rate
-- in force. Rows of unpriced metrics are left out (the rules price nothing they cannot), as the spend
-- reports' unpriced lines are.
INSERT INTO alert_priced_days BY NAME
WITH u AS (
  UNPIVOT (SELECT * FROM alert_fill_buckets WHERE hash(program_id) % CAST($chunks AS UBIGINT) = CAST($chunk AS UBIGINT)) ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
  INTO NAME metric VALUE value
)
SELECT u.api_version, u.org_id, u.program_id, CAST(timezone('UTC', u.timeframe_start) AS DATE) AS usage_day, p.period_id, p.period_plan,
  min(p.period_start) AS period_start, u.metric, any_value(m.aggregation) AS aggregation, r.rate_id,
  any_value(r.rate_micro) AS rate_micro, any_value(m.divisor) AS divisor,
  CAST(sum(u.value) AS HUGEINT) AS qty, CAST(max(u.value) AS HUGEINT) AS peak,
  CAST(sum(spend_cents(u.value, r.rate_micro, m.divisor)) AS BIGINT) AS cents, CAST(count(*) AS INTEGER) AS bucket_rows
FROM u
JOIN billing_periods p ON p.period_key = u.period_key
JOIN price_metrics m ON m.metric = u.metric
JOIN price_rates r ON r.plan = p.period_plan AND r.metric = u.metric
 AND u.timeframe_start >= r.effective_from AND (r.effective_to IS NULL OR u.timeframe_start < r.effective_to)
GROUP BY u.api_version, u.org_id, u.program_id, usage_day, p.period_id, p.period_plan, u.metric, r.rate_id;
