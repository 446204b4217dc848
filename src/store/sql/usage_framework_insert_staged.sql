-- Query: usage_framework_insert_staged
-- Parameters: $granularity VARCHAR, $run_id VARCHAR, $collected_at TIMESTAMPTZ.
-- Moves a batch's staged bucket rows into usage_framework_buckets (after usage_framework_delete_window
-- and billing_periods_insert_staged, same transaction), each with the key of its plan period.
INSERT INTO usage_framework_buckets
SELECT $granularity, s.org_id, s.program_id, s.framework_id, p.period_key, s.timeframe_start, s.timeframe_end,
       $run_id, $collected_at,
  compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
  public_network_transfer_bytes, private_network_transfer_bytes
FROM staging_usage s
JOIN staging_periods sp ON sp.period_local = s.period_local
JOIN billing_periods p
  ON p.period_id = sp.period_id AND p.period_plan = sp.period_plan AND p.period_start = sp.period_start
 AND p.period_end IS NOT DISTINCT FROM sp.period_end;
