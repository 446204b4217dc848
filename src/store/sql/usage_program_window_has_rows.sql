-- Query: usage_program_window_has_rows — whether a batch's window and scope already hold rows. When
-- they hold none (a backfill), pages need not delete what they replace, nor the batch sweep.
-- Parameters: $api_version VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ,
--   $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[].
SELECT EXISTS (
  SELECT 1 FROM usage_program
  WHERE api_version = $api_version AND granularity = $granularity
    AND timeframe_start >= $window_start AND timeframe_start < $window_end
    AND (NOT $by_org OR org_id = $org_id)
    AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
) AS has_rows;
