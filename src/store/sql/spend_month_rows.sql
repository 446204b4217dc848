-- Query: spend_month_rows (export --dataset, a spend_daily month's rows; staged into the TEMP table
-- export_partition by src/store/facade/exports.ts; copyPartitionSql writes it in key order)
-- Parameters: $granularity VARCHAR (the month's). Reads spend_month_split (spend_month_split.sql).
-- The columns of spend_daily (migration 018), line_id numbered within the month as spend_daily_in
-- numbers it (dense_rank of the program line), ranked over the month's distinct lines rather than
-- in a window over every row.
WITH ranks AS (
  SELECT program_line_no, dense_rank() OVER (ORDER BY program_line_no) AS line_rank
  FROM (SELECT DISTINCT program_line_no FROM spend_month_split)
)
SELECT CAST($granularity AS VARCHAR) AS granularity, d.usage_day, d.billing_month, d.org_id, d.program_id,
       d.program_name, d.line_type, d.framework_id, d.framework_name, d.api_version, d.period_id, d.period_plan,
       d.metric, d.billing_unit, d.quantity_raw, d.quantity, d.allowance, d.billable_quantity, d.rate, d.rate_id,
       d.cost, CASE WHEN NOT d.priced THEN d.note END AS unpriced_reason,
       'P' || r.line_rank AS line_id
FROM spend_month_split d
JOIN ranks r ON r.program_line_no = d.program_line_no
