-- Query: summary_by_metric (the workbook's Summary sheet)
-- Parameters: none; reads rpt_program_spend. Quantities are in billing units; gauges (aggregation
-- max) are summed across lines here only as peaks per line, so read them with that in mind.
SELECT api_version, metric, any_value(billing_unit) AS billing_unit,
  CAST(sum(quantity) AS DECIMAL(38,6)) AS quantity,
  CAST(sum(billable_quantity) AS DECIMAL(38,6)) AS billable_quantity,
  CAST(sum(cost) AS DECIMAL(18,2)) AS cost,
  CAST(count(*) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_lines
FROM rpt_program_spend
GROUP BY api_version, metric
ORDER BY api_version, metric;
