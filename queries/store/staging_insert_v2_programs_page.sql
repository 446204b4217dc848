-- Query: staging_insert_v2_programs_page — the long rows of a parsed v2 programs page into
-- staging_usage, converted from the raw JSON leaves that page_*_check.sql passed: one row per non-zero metric value (absent means 0, and an explicit 0 is stored as
-- absent). Parameters: $org_id (VARCHAR, the organization the page was asked for).
INSERT INTO staging_usage
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT i.program_id, NULL AS framework_id, unnest(i.periods) AS p FROM item),
bucket AS (SELECT program_id, framework_id, p.period_id, p.period_plan, p.period_start, p.period_end,
                  unnest(p.consumption) AS b FROM period),
metric AS (SELECT *, unnest(b.metrics) AS m FROM bucket)
SELECT $org_id, program_id->>'$', framework_id->>'$', period_id->>'$', period_plan->>'$',
       (period_start->>'$')::TIMESTAMPTZ, (period_end->>'$')::TIMESTAMPTZ,
       (b.timeframe_start->>'$')::TIMESTAMPTZ, (b.timeframe_end->>'$')::TIMESTAMPTZ, m.metric_name->>'$', m.value::BIGINT
FROM metric
WHERE m.value::BIGINT <> 0;
