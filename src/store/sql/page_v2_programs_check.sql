-- Query: page_v2_programs_check — whether the parsed v2 programs page (TEMP `page`) holds anything not
-- of its documented type (page_check_macros.sql): the number of offending items, periods and buckets,
-- 0 when they are sound (the metric entries are checked as they are converted, in
-- staging_insert_*_page.sql). Strict: an offending page is refused whole, never filtered.
-- Parameters: none.
WITH item AS (SELECT unnest(items) AS i FROM page),
period AS (SELECT unnest(i.periods) AS p FROM item),
bucket AS (SELECT unnest(p.consumption) AS b FROM period)
SELECT (SELECT count(*) FROM item WHERE i IS NULL OR NOT page_id_ok(i.program_id) OR i.periods IS NULL)
     + (SELECT count(*) FROM period WHERE NOT page_period_ok(p))
     + (SELECT count(*) FROM bucket WHERE NOT page_bucket_ok(b) OR b.metrics IS NULL)
       AS bad;
