-- Query: inventory_framework_count_by_program — how many frameworks the inventory knows for each of the
-- given programs that a window starting at $window_start could list (those deleted before it are not):
-- the collector sizes its frameworks requests by them so that a request's last page is not exactly full.
-- Parameters: $program_ids VARCHAR[], $window_start TIMESTAMPTZ. Programs with none known have no row.
SELECT program_id, count(*) AS n
FROM frameworks
WHERE program_id IN (SELECT unnest($program_ids::VARCHAR[]))
  AND (deleted_at IS NULL OR deleted_at > $window_start)
GROUP BY program_id;
