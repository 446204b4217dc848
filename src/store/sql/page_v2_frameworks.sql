-- Query: page_v2_frameworks — one page of GET /consumption_history/v2/frameworks into the TEMP table
-- `page` (items, cursor). Parameters: $json (VARCHAR, the response body).
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.frameworks AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"frameworks":[{"program_id":"VARCHAR","framework_id":"VARCHAR","periods":[{"period_id":"VARCHAR","period_plan":"VARCHAR","period_start":"TIMESTAMPTZ","period_end":"TIMESTAMPTZ","consumption":[{"timeframe_start":"TIMESTAMPTZ","timeframe_end":"TIMESTAMPTZ","metrics":[{"metric_name":"VARCHAR","value":"BIGINT"}]}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
