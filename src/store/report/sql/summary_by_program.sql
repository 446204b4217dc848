-- Query: summary_by_program (the workbook's Summary sheet)
-- Parameters: none; reads rpt_program_spend, the materialised program_spend report.
-- Totals are sums of the rounded line costs; cost is NULL (blank, never 0) when no line of the program is priced.
SELECT org_id, program_id, any_value(program_name) AS program_name,
  string_agg(DISTINCT period_plan, ', ' ORDER BY period_plan) AS plans,
  CAST(sum(cost) AS DECIMAL(18,2)) AS cost,
  CAST(count(*) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_lines
FROM rpt_program_spend
GROUP BY org_id, program_id
ORDER BY org_id NULLS FIRST, program_id;
