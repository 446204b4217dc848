-- Query: page_v1_programs_check — whether the parsed v1 page (TEMP `page`) holds anything not of its
-- documented type (page_check_macros.sql): the number of offending items, periods and buckets, 0 when
-- the page is sound. A metric field may be absent (or null: absent means 0); present, it must be a
-- counter. Strict: an offending page is refused whole, never filtered. Parameters: none.
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT unnest(i.periods) AS p FROM item),
bucket AS (SELECT unnest(p.consumption) AS b FROM period)
SELECT (SELECT count(*) FROM item WHERE i IS NULL OR NOT page_id_ok(i.program_id) OR i.periods IS NULL)
     + (SELECT count(*) FROM period WHERE NOT page_period_ok(p))
     + (SELECT count(*) FROM bucket WHERE NOT page_bucket_ok(b)
          OR NOT (b.active_time_seconds IS NULL OR page_count_ok(b.active_time_seconds))
          OR NOT (b.compute_time_seconds IS NULL OR page_count_ok(b.compute_time_seconds))
          OR NOT (b.written_data_bytes IS NULL OR page_count_ok(b.written_data_bytes))
          OR NOT (b.synthetic_storage_size_bytes IS NULL OR page_count_ok(b.synthetic_storage_size_bytes))
          OR NOT (b.data_storage_bytes_hour IS NULL OR page_count_ok(b.data_storage_bytes_hour))
          OR NOT (b.logical_size_bytes IS NULL OR page_count_ok(b.logical_size_bytes))
          OR NOT (b.logical_size_bytes_hour IS NULL OR page_count_ok(b.logical_size_bytes_hour)))
       AS bad;
