-- Query: finalize_lines (report output)
-- Parameters: $finalization_id VARCHAR, $month VARCHAR ('YYYY-MM'). Reads rpt_program_spend of the
-- run being finalised. Records its lines under their key (program, billing month, period, metric,
-- rate): the basis against which later exports list corrections (src/store/report/sql/corrections.sql).
INSERT INTO report_finalized_lines
SELECT $finalization_id, $month,
  concat_ws('|', program_id, CAST(billing_month AS VARCHAR), period_id, metric, coalesce(rate_id, '-')),
  org_id, program_id, program_name, period_plan, metric, rate_id, quantity_raw, billable_quantity, cost
FROM rpt_program_spend;
