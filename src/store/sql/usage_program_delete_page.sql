-- Query: usage_program_delete_page — removes what one page replaces: in the batch's window, every row
-- of the programs on the page (page_ids), whatever its period, so a restated bucket is corrected and a
-- vanished value removed. Parameters: $api_version VARCHAR, $granularity VARCHAR,
--   $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ (exclusive).
DELETE FROM usage_program
WHERE api_version = $api_version AND granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND program_id IN (SELECT id FROM page_ids);
