-- Query: coverage_insert
-- Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $status VARCHAR, $rows BIGINT, $run_id VARCHAR, $collected_at TIMESTAMPTZ,
--   $detail VARCHAR (NULL unless failed or not_eligible).
INSERT INTO coverage (source, granularity, scope, window_start, window_end, status, rows, run_id, collected_at, detail)
VALUES ($source, $granularity, $scope, $window_start, $window_end, $status, $rows, $run_id, $collected_at, $detail);
