-- Query: page_v2_programs — one page of GET /consumption_history/v2/programs, parsed by DuckDB's JSON
-- reader into the batch connection's TEMP table `page` (items, cursor).
-- Parameters: $json (VARCHAR, the response body). Every leaf stays raw JSON here: page_*_check.sql
-- refuses the page unless each is of its documented type, then the staging insert converts them.
-- Metric names are read as text: they are labels, and raw JSON per entry measured costly.
CREATE OR REPLACE TEMP TABLE page AS
SELECT d.programs AS items, d.pagination.cursor AS cursor
FROM (
  SELECT json_transform($json::VARCHAR, '{"programs":[{"program_id":"JSON","periods":[{"period_id":"JSON","period_plan":"JSON","period_start":"JSON","period_end":"JSON","consumption":[{"timeframe_start":"JSON","timeframe_end":"JSON","metrics":[{"metric_name":"VARCHAR","value":"JSON"}]}]}]}],"pagination":{"cursor":"VARCHAR"}}') AS d
);
