-- Query: page_v2_programs_check — whether the parsed v2 programs page (TEMP `page`) holds anything not
-- of its documented type (page_check_macros.sql): the number of offending items, periods, buckets and
-- metric entries, 0 when the page is sound. Strict: an offending page is refused whole, never filtered.
-- Parameters: none.
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT unnest(i.periods) AS p FROM item),
bucket AS (SELECT unnest(p.consumption) AS b FROM period),
metric AS (SELECT unnest(b.metrics) AS m FROM bucket)
SELECT (SELECT count(*) FROM item WHERE i IS NULL OR NOT page_id_ok(i.program_id) OR i.periods IS NULL)
     + (SELECT count(*) FROM period WHERE NOT page_period_ok(p))
     + (SELECT count(*) FROM bucket WHERE NOT page_bucket_ok(b) OR b.metrics IS NULL)
     + (SELECT count(*) FROM metric WHERE m IS NULL OR NOT page_id_ok(m.metric_name) OR NOT page_count_ok(m.value))
       AS bad;
