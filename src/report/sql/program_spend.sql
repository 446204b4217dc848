-- Report: program_spend
-- Parameters: $granularity VARCHAR ('hourly' | 'daily' | 'monthly': the finest complete one),
--             $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive; buckets by timeframe_start).
-- Requires src/report/sql/spend.sql. One row per organization, program, billing month, period (plan),
-- metric and rate in force (a mid-month plan or rate change splits a month into lines). Lines with
-- no usage are left out. cost is rounded to cents once per line (half-up); totals are sums of lines.
-- An unpriced line has cost NULL, priced = false and says why in note.
SELECT
  row_number() OVER (ORDER BY l.org_id NULLS FIRST, l.program_id, l.billing_month, l.line_from, l.period_id,
                              l.metric, l.rate_id NULLS FIRST) AS line_no,
  l.org_id,
  l.program_id,
  p.name AS program_name,
  l.api_version,
  l.billing_month,
  l.period_id,
  l.period_plan,
  l.metric,
  l.billing_unit,
  l.line_from,
  l.line_to,
  CAST(l.quantity_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(l.quantity_raw, l.divisor) AS quantity,
  spend_units(l.allowance_raw, l.divisor) AS allowance,
  spend_units(l.billable_raw, l.divisor) AS billable_quantity,
  l.rate,
  l.rate_id,
  spend_money(l.cost_cents) AS cost,
  l.unpriced_reason IS NULL AS priced,
  l.unpriced_reason AS note
FROM spend_program_lines($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ)) l
LEFT JOIN programs p ON p.program_id = l.program_id
WHERE l.quantity_raw <> 0
ORDER BY line_no;
