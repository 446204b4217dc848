-- Report: snapshot_storage
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- Requires the spend views of migration 004 (queries/schema/004_spend_in_database.sql). One row per organization, program, day, period (plan) and rate:
-- snapshot storage (snapshot_storage_bytes_month) in GB-month, its cost rounded to cents once per row
-- (half-up; no allowance applies to this metric in the book), and the program's snapshots from the
-- inventory that existed during that day (created before its end; not deleted or expired before its
-- start): total, manual and scheduled. With monthly data the day is the first of the month.
WITH d AS (
  SELECT
    org_id, program_id, usage_day, period_id, period_plan, rate_id,
    any_value(divisor) AS divisor, any_value(rate) AS rate, any_value(rate_micro) AS rate_micro,
    CAST(sum(value) AS HUGEINT) AS quantity_raw
  FROM spend_program_buckets
  WHERE granularity = $granularity
    AND timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND timeframe_start < CAST($range_end AS TIMESTAMPTZ)
    AND metric = 'snapshot_storage_bytes_month'
  GROUP BY org_id, program_id, usage_day, period_id, period_plan, rate_id
  HAVING sum(value) <> 0
),
days AS (
  SELECT DISTINCT program_id, usage_day,
    timezone('UTC', CAST(usage_day AS TIMESTAMP)) AS day_start,
    timezone('UTC', CAST(usage_day AS TIMESTAMP) + INTERVAL 1 DAY) AS day_end
  FROM d
),
snaps AS (
  SELECT days.program_id, days.usage_day,
    count(s.snapshot_id) AS snapshots,
    count(s.snapshot_id) FILTER (WHERE s.manual) AS manual_snapshots,
    count(s.snapshot_id) FILTER (WHERE NOT s.manual) AS scheduled_snapshots
  FROM days
  LEFT JOIN snapshots s
    ON s.program_id = days.program_id
   AND (s.created_at IS NULL OR s.created_at < days.day_end)
   AND (s.deleted_at IS NULL OR s.deleted_at > days.day_start)
   AND (s.expires_at IS NULL OR s.expires_at > days.day_start)
  GROUP BY days.program_id, days.usage_day
)
SELECT
  row_number() OVER (ORDER BY d.org_id NULLS FIRST, d.program_id, d.usage_day, d.period_id, d.rate_id NULLS FIRST) AS line_no,
  d.org_id,
  d.program_id,
  p.name AS program_name,
  d.usage_day AS day,
  d.period_id,
  d.period_plan,
  CAST(d.quantity_raw AS DECIMAL(38,0)) AS quantity_raw,
  spend_units(d.quantity_raw, d.divisor) AS gb_month,
  d.rate,
  d.rate_id,
  spend_money(CASE WHEN d.rate_micro IS NOT NULL AND d.divisor IS NOT NULL
                   THEN spend_cents(d.quantity_raw, d.rate_micro, d.divisor) END) AS cost,
  d.rate_micro IS NOT NULL AND d.divisor IS NOT NULL AS priced,
  CASE WHEN d.divisor IS NULL THEN 'unpriced: metric snapshot_storage_bytes_month is not in the price book catalogue'
       WHEN d.rate_micro IS NULL THEN 'unpriced: no rate for plan ' || d.period_plan || ' and metric snapshot_storage_bytes_month'
  END AS note,
  CAST(coalesce(s.snapshots, 0) AS BIGINT) AS snapshots,
  CAST(coalesce(s.manual_snapshots, 0) AS BIGINT) AS manual_snapshots,
  CAST(coalesce(s.scheduled_snapshots, 0) AS BIGINT) AS scheduled_snapshots
FROM d
LEFT JOIN snaps s ON s.program_id = d.program_id AND s.usage_day = d.usage_day
LEFT JOIN programs p ON p.program_id = d.program_id
ORDER BY line_no;
