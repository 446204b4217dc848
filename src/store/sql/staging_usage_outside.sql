-- Query: staging_usage_outside
-- Parameters: $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ, $by_org BOOLEAN, $org_id VARCHAR,
--   $by_programs BOOLEAN, $program_ids VARCHAR[], $needs_framework BOOLEAN.
-- One staged bucket row that the batch's delete would not cover (outside the window or the scope), or a
-- framework row without framework_id. Loading such a row could duplicate it on the next
-- re-collection, so the batch is refused instead. No row: all rows are inside.
SELECT s.org_id, s.program_id, s.framework_id, p.period_id, s.timeframe_start
FROM staging_usage s JOIN staging_periods p ON p.period_local = s.period_local
WHERE NOT (
        s.timeframe_start >= $window_start AND s.timeframe_start < $window_end
        AND (NOT $by_org OR coalesce(s.org_id = $org_id, false))
        AND (NOT $by_programs OR s.program_id IN (SELECT unnest($program_ids)))
      )
   OR ($needs_framework AND s.framework_id IS NULL)
LIMIT 1;
