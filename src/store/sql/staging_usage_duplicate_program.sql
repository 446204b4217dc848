-- Query: staging_usage_duplicate_program
-- Parameters: none. One key of usage_program that a batch holds more than once (api_version and
-- granularity are the batch's own, so the key within a batch is the rest). No row: no duplicate.
SELECT program_id, period_id, timeframe_start, metric, count(*) AS copies
FROM staging_usage
GROUP BY program_id, period_id, timeframe_start, metric
HAVING count(*) > 1
ORDER BY copies DESC, program_id, period_id, timeframe_start, metric
LIMIT 1;
