-- Query: inventory_programs_due
-- Parameters: $stale_before TIMESTAMPTZ (a listing older than this is due when the API gives no
-- updated_at, and always under --inventory always), $org_ids VARCHAR[] (empty: all), $run_id VARCHAR
-- (this run's consumption), $force BOOLEAN (re-list everything listed before $stale_before).
-- Live programs' listings (kind 'frameworks' or 'snapshots') worth a request, the most useful first:
-- never listed (0); a framework in this run's consumption not named yet (1, frameworks only);
-- updated_at moved since the listing (2); too old (3).
WITH unnamed AS (
  SELECT DISTINCT u.program_id
  FROM usage_framework u
  LEFT JOIN frameworks f USING (framework_id)
  LEFT JOIN inventory_sought s ON s.kind = 'framework' AND s.id = u.framework_id
  WHERE u.run_id = $run_id AND f.framework_id IS NULL AND s.id IS NULL
),
candidates AS (
  SELECT p.program_id, k.kind,
         CASE
           WHEN ls.listed_at IS NULL THEN 0
           WHEN k.kind = 'frameworks' AND p.program_id IN (SELECT program_id FROM unnamed) THEN 1
           WHEN pu.api_updated_at IS NOT NULL AND pu.api_updated_at IS DISTINCT FROM ls.listed_updated_at THEN 2
           WHEN ($force OR pu.api_updated_at IS NULL) AND ls.listed_at < $stale_before THEN 3
           ELSE NULL
         END AS reason
  FROM programs p
  CROSS JOIN (SELECT unnest(['frameworks', 'snapshots']) AS kind) k
  LEFT JOIN inventory_program_updated pu ON pu.program_id = p.program_id
  LEFT JOIN inventory_listing_state ls ON ls.program_id = p.program_id AND ls.kind = k.kind
  WHERE p.deleted_at IS NULL
    AND (len($org_ids) = 0 OR p.org_id IN (SELECT unnest($org_ids)))
)
SELECT program_id, kind, reason
FROM candidates
WHERE reason IS NOT NULL
ORDER BY reason, program_id, kind;
