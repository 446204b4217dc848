-- Query: chart_daily_spend (charts input)
-- Parameters: $top VARCHAR[] (the programs drawn on their own: chart_top_programs.sql's). Reads
-- rpt_daily (src/store/report/sql/daily_chunk.sql of the same run).
-- Spend per UTC day of each of the top programs, and of all the other programs together (program_id
-- NULL): the sum of their lines' daily shares, so the days add up to the workbook total to the cent.
-- Unpriced lines count 0 here and are flagged in the workbook. At 10,000 programs this is a few
-- hundred rows where one row per program and day was about 310,000.
SELECT top_id AS program_id, any_value(name) AS program_name, day, CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM (
  SELECT CASE WHEN list_contains($top, program_id) THEN program_id END AS top_id,
    CASE WHEN list_contains($top, program_id) THEN coalesce(program_name, program_id) END AS name,
    usage_day AS day, cost
  FROM rpt_daily
)
GROUP BY top_id, day
ORDER BY top_id NULLS LAST, day;
