-- Query: coverage_delete_same_failed — before a failed or not-eligible scope is recorded: removes only
-- the earlier unsuccessful rows of the same window, so the coverage the data had before (a complete or
-- partial row) stays beside the new failure. Parameters: $source VARCHAR, $granularity VARCHAR,
--   $scope VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ.
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end
  AND status IN ('failed', 'not_eligible');
