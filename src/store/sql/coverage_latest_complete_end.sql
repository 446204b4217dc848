-- Query: coverage_latest_complete_end
-- Parameters: $source VARCHAR, $granularity VARCHAR, $by_scope BOOLEAN, $scope VARCHAR.
-- The end (exclusive) of the latest complete window, for one scope or across all scopes.
SELECT max(window_end) AS window_end
FROM coverage
WHERE source = $source AND granularity = $granularity AND status = 'complete'
  AND (NOT $by_scope OR scope = $scope);
