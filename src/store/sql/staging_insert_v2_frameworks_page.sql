-- Query: staging_insert_v2_frameworks_page — the long rows of a parsed v2 frameworks page into
-- staging_usage, converted from the raw JSON leaves: one row per non-zero metric value (absent means
-- 0, and an explicit 0 is stored as absent). Parameters: $org_id (VARCHAR, the organization the page was asked for).
INSERT INTO staging_usage
-- Each leaf is converted at its own level, before the level below is unnested, so a period's or a
-- bucket's fields are converted once rather than once per metric.
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT i.program_id->>'$' AS program_id, i.framework_id->>'$' AS framework_id, unnest(i.periods) AS p FROM item),
bucket AS (SELECT program_id, framework_id, p.period_id->>'$' AS period_id, p.period_plan->>'$' AS period_plan,
                  (p.period_start->>'$')::TIMESTAMPTZ AS period_start, (p.period_end->>'$')::TIMESTAMPTZ AS period_end,
                  unnest(p.consumption) AS b FROM period),
timed AS (SELECT program_id, framework_id, period_id, period_plan, period_start, period_end,
                 (b.timeframe_start->>'$')::TIMESTAMPTZ AS timeframe_start, (b.timeframe_end->>'$')::TIMESTAMPTZ AS timeframe_end,
                 b.metrics FROM bucket),
metric AS (SELECT * EXCLUDE (metrics), unnest(metrics) AS m FROM timed)
-- The metric entries are checked here, in the one pass that converts them (page_*_check.sql checks the
-- levels above): an entry that is not a name and a counter stops the insert with PAGE_LEAF_REFUSED.
SELECT $org_id, program_id, framework_id, period_id, period_plan, period_start, period_end,
       timeframe_start, timeframe_end,
       CASE WHEN length(m.metric_name) > 0 THEN m.metric_name ELSE error('PAGE_LEAF_REFUSED') END,
       CASE WHEN page_count_ok(m.value) THEN m.value::VARCHAR::BIGINT ELSE error('PAGE_LEAF_REFUSED') END
FROM metric
-- A counter's literal is its digits: zero is exactly "0". Anything else goes on to be checked above.
WHERE m IS NULL OR m.value IS NULL OR m.value::VARCHAR <> '0';
