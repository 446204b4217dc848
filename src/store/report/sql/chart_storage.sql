-- Query: chart_storage (charts input)
-- Parameters: none; reads rpt_daily. Storage accrued per UTC day and metric, in GB-month (the metrics
-- billed per GB-month, summed over programs; framework and unattributed rows together are the programs').
SELECT usage_day AS day, metric, CAST(sum(quantity) AS DECIMAL(38,6)) AS gb_month
FROM rpt_daily
WHERE billing_unit = 'GB-month'
GROUP BY usage_day, metric
ORDER BY day, metric;
