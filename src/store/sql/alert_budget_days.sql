-- Query: alert_budget_days (the budgets' input, src/alerts/evaluate.ts)
-- Parameters: $month VARCHAR (YYYY-MM-01), $programs VARCHAR[] (programs named by budgets of the config).
-- Net spend (after included allowances, as program_spend bills it) per UTC day of the month, from the
-- daily buckets: each day line (program, period, metric, rate) rounded to cents once. One row per
-- organization and day, and one per named program and day.
WITH d AS (
  SELECT org_id, program_id, usage_day,
    CAST(sum(spend_cents(qty_raw - allowance_raw, rate_micro, divisor)) AS BIGINT) AS cents
  FROM spend_program_days('daily', CAST(CAST($month AS DATE) AS TIMESTAMP) AT TIME ZONE 'UTC',
                          CAST(CAST($month AS DATE) + INTERVAL 1 MONTH AS TIMESTAMP) AT TIME ZONE 'UTC')
  WHERE rate_micro IS NOT NULL AND divisor IS NOT NULL
  GROUP BY org_id, program_id, usage_day
)
SELECT 'organization' AS scope_kind, coalesce(org_id, '') AS scope_id, CAST(usage_day AS VARCHAR) AS day, CAST(sum(cents) AS BIGINT) AS cents
FROM d GROUP BY org_id, usage_day
UNION ALL
SELECT 'program', program_id, CAST(usage_day AS VARCHAR), cents FROM d WHERE list_contains($programs, program_id)
ORDER BY 1, 2, 3;
