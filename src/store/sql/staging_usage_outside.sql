-- Query: staging_usage_outside
-- Parameters: $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR,
--   $by_programs BOOLEAN, $program_ids VARCHAR[], $needs_framework BOOLEAN.
-- One staged row that the batch's delete would not cover (outside the window or the scope), or a
-- framework row without framework_id. Loading such a row could duplicate it on the next
-- re-collection, so the batch is refused instead. No row: all rows are inside.
SELECT org_id, program_id, framework_id, period_id, timeframe_start, metric
FROM staging_usage
WHERE NOT (
        timeframe_start >= $window_start AND timeframe_start < $window_end
        AND (NOT $by_org OR coalesce(org_id = $org_id, false))
        AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)))
      )
   OR ($needs_framework AND framework_id IS NULL)
LIMIT 1;
