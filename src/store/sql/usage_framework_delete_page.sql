-- Query: usage_framework_delete_page — as usage_program_delete_page, for the frameworks on the page.
-- Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ (exclusive).
DELETE FROM usage_framework
WHERE granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND framework_id IN (SELECT id FROM page_ids);
