-- Query: chart_transfer (charts input)
-- Parameters: none; reads rpt_transfer. Public and private transfer per UTC day: GB and cost.
SELECT day, metric, CAST(sum(quantity_gb) AS DECIMAL(38,6)) AS gb, CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_transfer
GROUP BY day, metric
ORDER BY day, metric;
