-- Query: storage_trend — storage per month in GB-months, by metric, for v2 (byte-months) and legacy
-- v1 (byte-hours) alike: every metric the catalogue bills in GB-month, divided by its divisor.
-- From the monthly buckets. Parameters: none.
SELECT CAST(timezone('UTC', u.timeframe_start) AS DATE) AS month,
       u.api_version,
       u.metric,
       any_value(m.display_name) AS display_name,
       count(DISTINCT u.program_id) AS programs,
       round(CAST(sum(u.value) AS DOUBLE) / CAST(any_value(m.divisor) AS DOUBLE), 3) AS gb_months
FROM usage_program u
JOIN price_metrics m ON m.metric = u.metric
WHERE u.granularity = 'monthly' AND m.billing_unit = 'GB-month'
GROUP BY ALL
ORDER BY month, u.api_version, u.metric;
