-- Query: usage_framework_insert_staged
-- Parameters: $granularity VARCHAR, $run_id VARCHAR, $collected_at TIMESTAMPTZ.
-- Moves a batch's staged rows into the fact table (after usage_framework_delete_window, same transaction).
INSERT INTO usage_framework (
  granularity, org_id, program_id, framework_id, period_id, period_plan, period_start, period_end,
  timeframe_start, timeframe_end, metric, value, run_id, collected_at)
SELECT $granularity, org_id, program_id, framework_id, period_id, period_plan, period_start, period_end,
       timeframe_start, timeframe_end, metric, value, $run_id, $collected_at
FROM staging_usage;
