-- Query: staging_insert_v1_page — the long rows of a parsed v1 page into staging_usage: each bucket's
-- metric fields unpivoted, one row per non-zero value, converted from the raw JSON leaves that
-- page_v1_programs_check.sql passed. Parameters: $org_id (VARCHAR).
INSERT INTO staging_usage
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT i.program_id, unnest(i.periods) AS p FROM item),
bucket AS (SELECT program_id, p.period_id, p.period_plan, p.period_start, p.period_end,
                  unnest(p.consumption) AS b FROM period),
metric AS (
  SELECT *, unnest([
    {'name': 'active_time_seconds', 'value': b.active_time_seconds::BIGINT},
    {'name': 'compute_time_seconds', 'value': b.compute_time_seconds::BIGINT},
    {'name': 'written_data_bytes', 'value': b.written_data_bytes::BIGINT},
    {'name': 'synthetic_storage_size_bytes', 'value': b.synthetic_storage_size_bytes::BIGINT},
    {'name': 'data_storage_bytes_hour', 'value': b.data_storage_bytes_hour::BIGINT},
    {'name': 'logical_size_bytes', 'value': b.logical_size_bytes::BIGINT},
    {'name': 'logical_size_bytes_hour', 'value': b.logical_size_bytes_hour::BIGINT}
  ]) AS m
  FROM bucket
)
SELECT $org_id, program_id->>'$', NULL, period_id->>'$', period_plan->>'$',
       (period_start->>'$')::TIMESTAMPTZ, (period_end->>'$')::TIMESTAMPTZ,
       (b.timeframe_start->>'$')::TIMESTAMPTZ, (b.timeframe_end->>'$')::TIMESTAMPTZ, m.name, m.value
FROM metric
WHERE m.value IS NOT NULL AND m.value <> 0;
