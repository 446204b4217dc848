-- Query: chart_snapshots (charts input)
-- Parameters: none; reads rpt_snapshot_storage. Snapshots existing per UTC day over all programs
-- (a program counted once per day even when a plan change splits its rows). The counts are NULL on
-- days before snapshots_known_from (the inventory had not listed snapshots yet): unknown, not 0.
SELECT day, CAST(sum(snapshots) AS BIGINT) AS snapshots, CAST(sum(manual) AS BIGINT) AS manual, CAST(sum(scheduled) AS BIGINT) AS scheduled,
  any_value(known_from) AS known_from
FROM (
  SELECT program_id, day, max(snapshots) AS snapshots, max(manual_snapshots) AS manual, max(scheduled_snapshots) AS scheduled,
    any_value(snapshots_known_from) AS known_from
  FROM rpt_snapshot_storage GROUP BY program_id, day
)
GROUP BY day
ORDER BY day;
