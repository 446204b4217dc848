-- Query: usage_summary
-- Parameters: none. What the fact tables hold, per table, api version and granularity (for status).
SELECT 'usage_program' AS table_name, api_version, granularity, count(*) AS rows,
       min(timeframe_start) AS first_start, max(timeframe_end) AS last_end, max(collected_at) AS last_collected_at
FROM usage_program
GROUP BY api_version, granularity
UNION ALL
SELECT 'usage_framework' AS table_name, NULL AS api_version, granularity, count(*) AS rows,
       min(timeframe_start), max(timeframe_end), max(collected_at)
FROM usage_framework
GROUP BY granularity
ORDER BY table_name, api_version, granularity;
