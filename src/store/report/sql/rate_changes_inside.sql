-- Query: rate_changes_inside (report input)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive).
-- With monthly data a bucket is the whole month and is priced at the rate in force at its start; a
-- rate of a plan and metric the period uses that starts or ends strictly inside the period is then
-- not applied. One row per such rate, so the report can say so (and exit 2) instead of staying silent.
SELECT DISTINCT r.rate_id, r.plan, r.metric, r.effective_from, r.effective_to
FROM price_rates r
SEMI JOIN usage_program u
  ON u.period_plan = r.plan AND u.metric = r.metric AND u.granularity = $granularity
 AND u.timeframe_start >= CAST($range_start AS TIMESTAMPTZ) AND u.timeframe_start < CAST($range_end AS TIMESTAMPTZ)
WHERE (r.effective_from > CAST($range_start AS TIMESTAMPTZ) AND r.effective_from < CAST($range_end AS TIMESTAMPTZ))
   OR (r.effective_to > CAST($range_start AS TIMESTAMPTZ) AND r.effective_to < CAST($range_end AS TIMESTAMPTZ))
ORDER BY r.plan, r.metric, r.effective_from;
