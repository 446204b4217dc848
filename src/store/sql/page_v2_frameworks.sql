-- Query: page_v2_frameworks — one page of GET /consumption_history/v2/frameworks into the TEMP table
-- `page` (items, cursor). Parameters: $json (VARCHAR, the response body).
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.frameworks AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"frameworks":[{"program_id":"JSON","framework_id":"JSON","periods":[{"period_id":"JSON","period_plan":"JSON","period_start":"JSON","period_end":"JSON","consumption":[{"timeframe_start":"JSON","timeframe_end":"JSON","metrics":[{"metric_name":"VARCHAR","value":"JSON"}]}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
