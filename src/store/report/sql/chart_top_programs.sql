-- Query: chart_top_programs (charts input)
-- Parameters: $limit BIGINT. Reads rpt_program_spend. The programs with the highest cost.
SELECT program_id, any_value(coalesce(program_name, program_id)) AS name,
  CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_program_spend
GROUP BY program_id
ORDER BY cost DESC, program_id
LIMIT $limit;
