-- Query: coverage_by_scope_add
-- Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
-- $window_end TIMESTAMPTZ, $status VARCHAR, $run_id VARCHAR, $collected_at TIMESTAMPTZ, $detail VARCHAR,
-- $complete_deleted BIGINT (complete rows of the same window the write deleted).
-- A coverage row just written, folded into its scope's summary (migration 021) when that is exact: the row
-- is newer than every row the scope had, so it is the latest and whatever the write deleted was older;
-- and no complete row went unless the new one is complete (then both are of the same window, so the
-- span stays). Otherwise nothing changes (0 rows) and the caller recomputes the scope.
UPDATE coverage_by_scope SET
  first_complete_start = CASE WHEN $status = 'complete' THEN least(first_complete_start, $window_start)
                              ELSE first_complete_start END,
  last_complete_end = CASE WHEN $status = 'complete' THEN greatest(last_complete_end, $window_end)
                           ELSE last_complete_end END,
  last_data_end = CASE WHEN $status IN ('complete', 'partial') THEN greatest(last_data_end, $window_end)
                       ELSE last_data_end END,
  complete_windows = complete_windows + CASE WHEN $status = 'complete' THEN 1 ELSE 0 END - $complete_deleted,
  last_collected_at = $collected_at,
  last_complete_collected_at = CASE WHEN $status = 'complete' THEN $collected_at
                                    ELSE last_complete_collected_at END,
  last_status = $status,
  last_detail = $detail,
  last_run_id = $run_id
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND last_collected_at < $collected_at
  AND ($status = 'complete' OR $complete_deleted = 0);
