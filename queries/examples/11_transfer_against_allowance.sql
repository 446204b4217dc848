-- Query: transfer_against_allowance — last month's public transfer per program against the
-- allowance included with its plan (price_allowances, netted in time order as the reports do):
-- GB sent, GB covered by the allowance, GB billed, cost, and the share of the allowance used
-- (NULL when the plan has no allowance). spend_report_lines_in prices last month alone: the lines of
-- its program_spend.parquet. Parameters: none.
SELECT l.program_id,
       any_value(l.program_name) AS program_name,
       l.period_plan,
       sum(l.quantity) AS public_gb,
       any_value(CAST(a.included_raw AS DECIMAL(38,0)) / m.divisor) AS included_gb,
       sum(l.allowance) AS allowance_used_gb,
       sum(l.billable_quantity) AS billable_gb,
       sum(l.cost) AS cost,
       round(100 * sum(l.quantity) / any_value(CAST(a.included_raw AS DECIMAL(38,0)) / m.divisor), 1) AS pct_of_allowance
FROM spend_report_lines_in(timezone('UTC', date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH),
                           timezone('UTC', date_trunc('month', timezone('UTC', now())))) l
JOIN price_metrics m ON m.metric = l.metric
LEFT JOIN price_allowances a
  ON a.plan = l.period_plan AND a.metric = l.metric
 AND l.billing_month >= a.effective_from AND (a.effective_to IS NULL OR l.billing_month < a.effective_to)
WHERE l.metric = 'public_network_transfer_bytes'
GROUP BY l.program_id, l.period_plan
ORDER BY public_gb DESC, l.program_id;
