-- Query: rows_spend_daily (export --dataset)
-- Parameters: $from DATE (the billing month's first day). The month's priced daily lines.
SELECT * FROM spend_daily
WHERE billing_month = CAST($from AS DATE)
ORDER BY usage_day, org_id NULLS FIRST, program_id, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id
