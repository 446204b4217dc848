-- Query: page_v2_programs — one page of GET /consumption_history/v2/programs, parsed by DuckDB's JSON
-- reader into the batch connection's TEMP table `page` (items, cursor).
-- Parameters: $json (VARCHAR, the response body). Values stay exact: BIGINT is parsed as int64.
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.programs AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"programs":[{"program_id":"VARCHAR","periods":[{"period_id":"VARCHAR","period_plan":"VARCHAR","period_start":"TIMESTAMPTZ","period_end":"TIMESTAMPTZ","consumption":[{"timeframe_start":"TIMESTAMPTZ","timeframe_end":"TIMESTAMPTZ","metrics":[{"metric_name":"VARCHAR","value":"BIGINT"}]}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
