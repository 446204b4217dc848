-- Report: snapshot_storage
-- Parameters: $line_offset BIGINT (the lines of the chunks before this one); reads rpt_daily_chunk,
-- one chunk of rpt_daily (src/store/report/sql/daily_chunk.sql of the same run: the detail of
-- program_spend's lines); the lines are numbered program first, so the chunks in order give the
-- period's lines (report/stages.ts). One row per organization, program, day, period (plan) and rate: snapshot
-- storage (snapshot_storage_bytes_month) in GB-month and its share of the program line's rounded
-- cost (largest remainder), so the report adds up to program_spend's snapshot lines to the cent.
-- Snapshots from the inventory that existed during the day (created before its end; not deleted or
-- expired before its start): total, manual and scheduled; NULL before the inventory first saw
-- snapshots (snapshots_known_from), because they are not known then. With monthly data the day is
-- the first of the month.
WITH d AS (
  SELECT * FROM rpt_daily_chunk WHERE metric = 'snapshot_storage_bytes_month'
),
known AS (
  SELECT min(first_seen_at) AS known_from FROM snapshots
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
  CAST($line_offset + row_number() OVER (ORDER BY d.org_id NULLS FIRST, d.program_id, d.usage_day, d.period_id, d.rate_id NULLS FIRST) AS BIGINT) AS line_no,
  d.program_line_no,
  d.org_id,
  d.program_id,
  d.program_name,
  d.usage_day AS day,
  d.period_id,
  d.period_plan,
  d.quantity_raw,
  d.quantity AS gb_month,
  d.rate,
  d.rate_id,
  d.cost,
  d.priced,
  CASE WHEN NOT d.priced THEN d.note END AS note,
  CASE WHEN k.known_from < timezone('UTC', CAST(d.usage_day AS TIMESTAMP) + INTERVAL 1 DAY) THEN CAST(coalesce(s.snapshots, 0) AS BIGINT) END AS snapshots,
  CASE WHEN k.known_from < timezone('UTC', CAST(d.usage_day AS TIMESTAMP) + INTERVAL 1 DAY) THEN CAST(coalesce(s.manual_snapshots, 0) AS BIGINT) END AS manual_snapshots,
  CASE WHEN k.known_from < timezone('UTC', CAST(d.usage_day AS TIMESTAMP) + INTERVAL 1 DAY) THEN CAST(coalesce(s.scheduled_snapshots, 0) AS BIGINT) END AS scheduled_snapshots,
  k.known_from AS snapshots_known_from
FROM d
CROSS JOIN known k
LEFT JOIN snaps s ON s.program_id = d.program_id AND s.usage_day = d.usage_day
ORDER BY line_no;
