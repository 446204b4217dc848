-- Query: dataset_units (export --dataset, a full export; run by src/store/facade/exports.ts)
-- Parameters: none. Every file unit the usage and spend streams have rows for: hourly usage by UTC
-- day, daily and monthly usage by UTC month, the priced daily lines by billing month. Reads the
-- bucket tables' time column only (no row is hashed here).
SELECT DISTINCT 'usage_program' AS stream, granularity,
       strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month,
       CASE WHEN granularity = 'hourly' THEN strftime(timezone('UTC', timeframe_start), '%Y-%m-%d') END AS day
FROM usage_program_buckets
UNION
SELECT DISTINCT 'usage_framework', granularity,
       strftime(timezone('UTC', timeframe_start), '%Y-%m'),
       CASE WHEN granularity = 'hourly' THEN strftime(timezone('UTC', timeframe_start), '%Y-%m-%d') END
FROM usage_framework_buckets
UNION
SELECT DISTINCT 'spend_daily', NULL, strftime(timezone('UTC', timeframe_start), '%Y-%m'), NULL
FROM usage_program_buckets
ORDER BY ALL;
