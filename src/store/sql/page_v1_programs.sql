-- Query: page_v1_programs — one page of GET /consumption_history/programs (legacy: one integer field
-- per metric in each bucket) into the TEMP table `page` (items, cursor).
-- Parameters: $json (VARCHAR, the response body).
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.programs AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"programs":[{"program_id":"VARCHAR","periods":[{"period_id":"VARCHAR","period_plan":"VARCHAR","period_start":"TIMESTAMPTZ","period_end":"TIMESTAMPTZ","consumption":[{"timeframe_start":"TIMESTAMPTZ","timeframe_end":"TIMESTAMPTZ","active_time_seconds":"BIGINT","compute_time_seconds":"BIGINT","written_data_bytes":"BIGINT","synthetic_storage_size_bytes":"BIGINT","data_storage_bytes_hour":"BIGINT","logical_size_bytes":"BIGINT","logical_size_bytes_hour":"BIGINT"}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
