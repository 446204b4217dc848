-- Query: usage_program_insert_staged
-- Parameters: $api_version VARCHAR, $granularity VARCHAR, $run_id VARCHAR, $collected_at TIMESTAMPTZ.
-- Moves a batch's staged rows into the fact table (after usage_program_delete_window, same transaction).
INSERT INTO usage_program (
  api_version, granularity, org_id, program_id, period_id, period_plan, period_start, period_end,
  timeframe_start, timeframe_end, metric, value, run_id, collected_at)
SELECT $api_version, $granularity, org_id, program_id, period_id, period_plan, period_start, period_end,
       timeframe_start, timeframe_end, metric, value, $run_id, $collected_at
FROM staging_usage;
