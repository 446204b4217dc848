-- Query: daily_wide_last_week — the wide daily view for the last 7 complete days: one row per
-- program, day and plan period, one column per metric. Parameters: none.
SELECT program_id, period_plan, timeframe_start::DATE AS day,
       compute_unit_seconds, root_branch_bytes_month, public_network_transfer_bytes,
       active_time_seconds, written_data_bytes
FROM usage_program_daily
WHERE timeframe_start >= date_trunc('day', now()) - INTERVAL 7 DAY
ORDER BY program_id, day;
