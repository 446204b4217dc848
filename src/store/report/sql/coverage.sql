-- Query: coverage (report input, not a report file)
-- Parameters: $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- For every (source, scope) that has any coverage row overlapping the range, at every granularity:
-- how many milliseconds of the range its 'complete' windows cover (overlapping windows merged),
-- the statuses seen and the runs that wrote them. src/report/coverage.ts decides from this which
-- granularity is complete and which the report uses.
WITH c AS (
  SELECT source, granularity, scope, status, run_id,
         greatest(window_start, $range_start) AS s, least(window_end, $range_end) AS e
  FROM coverage
  WHERE window_start < $range_end AND window_end > $range_start
),
scopes AS (SELECT DISTINCT source, scope FROM c),
grans AS (SELECT unnest(['hourly', 'daily', 'monthly']) AS granularity),
ordered AS (
  SELECT source, granularity, scope, s, e,
    max(e) OVER (PARTITION BY source, granularity, scope ORDER BY s, e
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
  FROM c WHERE status = 'complete'
),
islands AS (
  SELECT *, sum(CASE WHEN prev_end IS NULL OR s > prev_end THEN 1 ELSE 0 END) OVER (
      PARTITION BY source, granularity, scope ORDER BY s, e ROWS UNBOUNDED PRECEDING) AS island
  FROM ordered
),
merged AS (
  SELECT source, granularity, scope, island, min(s) AS s, max(e) AS e
  FROM islands GROUP BY source, granularity, scope, island
),
covered AS (
  SELECT source, granularity, scope, sum(epoch_ms(e) - epoch_ms(s)) AS covered_ms
  FROM merged GROUP BY source, granularity, scope
),
seen AS (
  SELECT source, granularity, scope,
    string_agg(DISTINCT status, ',' ORDER BY status) AS statuses,
    string_agg(DISTINCT run_id, ',' ORDER BY run_id) AS run_ids
  FROM c GROUP BY source, granularity, scope
)
SELECT sc.source, g.granularity, sc.scope,
  CAST(coalesce(cv.covered_ms, 0) AS BIGINT) AS covered_ms,
  coalesce(se.statuses, '') AS statuses,
  coalesce(se.run_ids, '') AS run_ids
FROM scopes sc
CROSS JOIN grans g
LEFT JOIN covered cv ON cv.source = sc.source AND cv.granularity = g.granularity AND cv.scope = sc.scope
LEFT JOIN seen se ON se.source = sc.source AND se.granularity = g.granularity AND se.scope = sc.scope
ORDER BY sc.source, sc.scope, g.granularity;
