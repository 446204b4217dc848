-- Report: corrections (the changes to a finalised month since its finalisation)
-- Parameters: $finalization_id VARCHAR. Reads rpt_program_spend of the run (the current lines)
-- and report_finalized_lines (the lines as finalised). One row per program_spend line whose quantity
-- or cost differs from the finalised one, including lines that appeared or vanished: the finalised
-- and current amounts and the change. The sum of cost_change is what the month's total moved by.
WITH cur AS (
  SELECT concat_ws('|', program_id, CAST(billing_month AS VARCHAR), period_id, metric, coalesce(rate_id, '-')) AS line_key,
    org_id, program_id, program_name, period_plan, metric, rate_id, quantity_raw, billable_quantity, cost
  FROM rpt_program_spend
),
fin AS (
  SELECT * FROM report_finalized_lines WHERE finalization_id = $finalization_id
),
j AS (
  SELECT coalesce(c.line_key, f.line_key) AS line_key,
    coalesce(c.org_id, f.org_id) AS org_id, coalesce(c.program_id, f.program_id) AS program_id,
    coalesce(c.program_name, f.program_name) AS program_name, coalesce(c.period_plan, f.period_plan) AS period_plan,
    coalesce(c.metric, f.metric) AS metric, coalesce(c.rate_id, f.rate_id) AS rate_id,
    CASE WHEN f.line_key IS NULL THEN 'added' WHEN c.line_key IS NULL THEN 'removed' ELSE 'changed' END AS change,
    f.quantity_raw AS finalized_quantity_raw, c.quantity_raw AS current_quantity_raw,
    CAST(coalesce(c.quantity_raw, 0) - coalesce(f.quantity_raw, 0) AS DECIMAL(38,0)) AS quantity_raw_change,
    f.cost AS finalized_cost, c.cost AS current_cost,
    CAST(coalesce(c.cost, 0) - coalesce(f.cost, 0) AS DECIMAL(18,2)) AS cost_change
  FROM cur c FULL OUTER JOIN fin f ON f.line_key = c.line_key
)
SELECT row_number() OVER (ORDER BY org_id NULLS FIRST, program_id, line_key) AS line_no, $finalization_id AS corrects_finalization, *
FROM j
WHERE finalized_quantity_raw IS DISTINCT FROM current_quantity_raw OR finalized_cost IS DISTINCT FROM current_cost
ORDER BY line_no
