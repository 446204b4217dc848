-- Query: chart_daily_spend (charts and forecast input)
-- Parameters: none; reads rpt_daily (src/store/report/sql/daily_chunk.sql of the same run).
-- Spend per program and UTC day: the sum of its lines' daily shares, so the days of a program add up
-- to its workbook total to the cent. Unpriced lines count 0 here and are flagged in the workbook.
SELECT program_id, any_value(coalesce(program_name, program_id)) AS program_name, usage_day AS day,
  CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_daily
GROUP BY program_id, usage_day
ORDER BY program_id, day;
