-- Query: chart_top_frameworks (charts input)
-- Parameters: $limit BIGINT. Reads rpt_framework_spend. The current frameworks with the highest cost
-- over the six framework metrics (reconciliation lines are not a framework and are left out).
SELECT framework_id, any_value(coalesce(framework_name, framework_id)) AS name,
  any_value(coalesce(program_name, program_id)) AS program_name,
  CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_framework_spend
WHERE line_type = 'framework'
GROUP BY framework_id
ORDER BY cost DESC, framework_id
LIMIT $limit;
