-- Query: chart_snapshots (charts input)
-- Parameters: none; reads rpt_snapshot_storage. Snapshots existing per UTC day over all programs
-- (a program counted once per day even when a plan change splits its rows).
SELECT day, CAST(sum(snapshots) AS BIGINT) AS snapshots, CAST(sum(manual) AS BIGINT) AS manual, CAST(sum(scheduled) AS BIGINT) AS scheduled
FROM (
  SELECT program_id, day, max(snapshots) AS snapshots, max(manual_snapshots) AS manual, max(scheduled_snapshots) AS scheduled
  FROM rpt_snapshot_storage GROUP BY program_id, day
)
GROUP BY day
ORDER BY day;
