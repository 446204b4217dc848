-- Query: page_v1_programs — one page of GET /consumption_history/programs (legacy: one integer field
-- per metric in each bucket) into the TEMP table `page` (items, cursor). Every leaf stays raw JSON
-- here: page_v1_programs_check.sql refuses the page unless each is of its documented type.
-- Parameters: $json (VARCHAR, the response body).
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.programs AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"programs":[{"program_id":"JSON","periods":[{"period_id":"JSON","period_plan":"JSON","period_start":"JSON","period_end":"JSON","consumption":[{"timeframe_start":"JSON","timeframe_end":"JSON","active_time_seconds":"JSON","compute_time_seconds":"JSON","written_data_bytes":"JSON","synthetic_storage_size_bytes":"JSON","data_storage_bytes_hour":"JSON","logical_size_bytes":"JSON","logical_size_bytes_hour":"JSON"}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
