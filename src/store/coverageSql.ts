// The coverage rows a batch commit and a recorded failure write (usageBatch.ts, facade.ts): one per
// (source, granularity, scope, window).

// Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
// $window_end TIMESTAMPTZ. coverage keeps one row per (source, granularity, scope, window): a
// re-collection replaces it.
export const COVERAGE_DELETE_SAME_SQL = `
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end;`;

// Before a failed or not-eligible scope is recorded: removes only the earlier unsuccessful rows of the
// same window, so the coverage the data had before (a complete or partial row) stays beside the new
// failure. Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start
// TIMESTAMPTZ, $window_end TIMESTAMPTZ.
export const COVERAGE_DELETE_SAME_FAILED_SQL = `
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end
  AND status IN ('failed', 'not_eligible');`;

// Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
// $window_end TIMESTAMPTZ, $status VARCHAR, $rows BIGINT, $run_id VARCHAR, $collected_at TIMESTAMPTZ,
// $detail VARCHAR (NULL unless failed or not_eligible).
export const COVERAGE_INSERT_SQL = `
INSERT INTO coverage (source, granularity, scope, window_start, window_end, status, rows, run_id, collected_at, detail)
VALUES ($source, $granularity, $scope, $window_start, $window_end, $status, $rows, $run_id, $collected_at, $detail);`;
