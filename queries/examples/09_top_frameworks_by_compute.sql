-- Query: top_frameworks_by_compute — where last month's compute went: every v2 framework
-- (compute_unit_seconds, CU-hours) and every legacy v1 program, which has no frameworks and so
-- stands as one row of its own (compute_time_seconds, hours). Parameters: none.
WITH month AS (
  SELECT timezone('UTC', date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH) AS m_from,
         timezone('UTC', date_trunc('month', timezone('UTC', now()))) AS m_to
),
v2 AS (
  SELECT f.program_id, f.framework_id, fw.name AS framework_name, 'v2' AS api_version, f.metric, sum(f.value) AS raw
  FROM usage_framework f
  CROSS JOIN month
  LEFT JOIN frameworks fw ON fw.framework_id = f.framework_id
  WHERE f.granularity = 'daily' AND f.metric = 'compute_unit_seconds'
    AND f.timeframe_start >= month.m_from AND f.timeframe_start < month.m_to
  GROUP BY ALL
),
v1 AS (
  SELECT u.program_id, CAST(NULL AS VARCHAR) AS framework_id, CAST(NULL AS VARCHAR) AS framework_name,
         'v1' AS api_version, u.metric, sum(u.value) AS raw
  FROM usage_program u
  CROSS JOIN month
  WHERE u.api_version = 'v1' AND u.granularity = 'daily' AND u.metric = 'compute_time_seconds'
    AND u.timeframe_start >= month.m_from AND u.timeframe_start < month.m_to
  GROUP BY ALL
)
SELECT x.program_id, p.name AS program_name, x.api_version, x.framework_id, x.framework_name, m.billing_unit AS unit,
       CAST(x.raw AS BIGINT) AS raw_seconds,
       round(CAST(x.raw AS DOUBLE) / CAST(m.divisor AS DOUBLE), 2) AS compute_hours
FROM (SELECT * FROM v2 UNION ALL SELECT * FROM v1) x
JOIN price_metrics m ON m.metric = x.metric
LEFT JOIN programs p ON p.program_id = x.program_id
ORDER BY compute_hours DESC, x.program_id, x.framework_id NULLS FIRST
LIMIT 20;
