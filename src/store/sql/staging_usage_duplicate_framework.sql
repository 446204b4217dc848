-- Query: staging_usage_duplicate_framework
-- Parameters: none. One key of usage_framework (granularity is the batch's own) that a batch holds
-- more than once. No row: no duplicate.
SELECT framework_id, period_id, timeframe_start, metric, count(*) AS copies
FROM staging_usage
GROUP BY framework_id, period_id, timeframe_start, metric
HAVING count(*) > 1
ORDER BY copies DESC, framework_id, period_id, timeframe_start, metric
LIMIT 1;
