-- Query: coverage_delete_same
-- Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ.
-- coverage keeps one row per (source, granularity, scope, window): a re-collection replaces it.
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end;
