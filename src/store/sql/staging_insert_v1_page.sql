-- Query: staging_insert_v1_page — the long rows of a parsed v1 page into staging_usage: each bucket's
-- metric fields unpivoted, one row per non-zero value. Parameters: $org_id (VARCHAR).
INSERT INTO staging_usage
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT i.program_id, unnest(i.periods) AS p FROM item),
bucket AS (SELECT program_id, p.period_id, p.period_plan, p.period_start, p.period_end,
                  unnest(p.consumption) AS b FROM period),
metric AS (
  SELECT *, unnest([
    {'name': 'active_time_seconds', 'value': b.active_time_seconds},
    {'name': 'compute_time_seconds', 'value': b.compute_time_seconds},
    {'name': 'written_data_bytes', 'value': b.written_data_bytes},
    {'name': 'synthetic_storage_size_bytes', 'value': b.synthetic_storage_size_bytes},
    {'name': 'data_storage_bytes_hour', 'value': b.data_storage_bytes_hour},
    {'name': 'logical_size_bytes', 'value': b.logical_size_bytes},
    {'name': 'logical_size_bytes_hour', 'value': b.logical_size_bytes_hour}
  ]) AS m
  FROM bucket
)
SELECT $org_id, program_id, NULL, period_id, period_plan, period_start, period_end,
       b.timeframe_start, b.timeframe_end, m.name, m.value
FROM metric
WHERE m.value IS NOT NULL AND m.value <> 0;
