-- Report: transfer
-- Parameters: $line_offset BIGINT (the lines of the chunks before this one); reads rpt_daily_chunk,
-- one chunk of rpt_daily (src/store/report/sql/daily_chunk.sql of the same run: the detail of
-- program_spend's lines); the lines are numbered program first, so the chunks in order give the
-- period's lines (report/stages.ts). Public and private transfer per organization, program, day, period (plan),
-- rate and framework: one row per current framework and one 'unattributed' row (framework_id NULL)
-- for the program's usage no current framework accounts for. The allowance is the one program_spend
-- nets, taken in time order (by day, then framework_id, the unattributed row last); each row's cost
-- is its share of the program line's rounded cost (largest remainder), so transfer adds up to
-- program_spend's transfer lines to the cent. With monthly data the day is the first of the month.
SELECT
  CAST($line_offset + row_number() OVER (ORDER BY d.org_id NULLS FIRST, d.program_id, d.usage_day, d.period_id, d.metric,
                              d.rate_id NULLS FIRST, d.framework_id NULLS LAST) AS BIGINT) AS line_no,
  d.program_line_no,
  d.org_id,
  d.program_id,
  d.program_name,
  CASE WHEN d.framework_id IS NULL THEN 'unattributed' ELSE 'framework' END AS attribution,
  d.framework_id,
  d.framework_name,
  d.usage_day AS day,
  d.period_id,
  d.period_plan,
  d.metric,
  d.quantity_raw,
  d.quantity AS quantity_gb,
  d.allowance AS allowance_gb,
  d.billable_quantity AS billable_gb,
  d.rate,
  d.rate_id,
  d.cost,
  d.priced,
  CASE WHEN NOT d.priced THEN d.note END AS note
FROM rpt_daily_chunk d
WHERE d.metric IN ('public_network_transfer_bytes', 'private_network_transfer_bytes')
ORDER BY line_no;
