-- Query: page_check_macros — the checks a consumption page's leaves must pass, as TEMP macros on a
-- batch's connection (page_*_check.sql use them). Parameters: none.
-- An id is a non-empty JSON string; a time is a JSON string holding an ISO 8601 date-time with a zone;
-- a counter is a JSON integer in [0, 2^63-1] (yyjson reads a non-negative integer literal as UBIGINT,
-- a negative one as BIGINT and anything with a fraction or exponent as DOUBLE).
CREATE OR REPLACE TEMP MACRO page_id_ok(x) AS
  coalesce(json_type(x) = 'VARCHAR' AND length(x->>'$') > 0, false);
CREATE OR REPLACE TEMP MACRO page_time_ok(x) AS
  coalesce(json_type(x) = 'VARCHAR'
    AND regexp_full_match(x->>'$', '\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})')
    AND try_cast(x->>'$' AS TIMESTAMPTZ) IS NOT NULL, false);
-- int64's bound is checked on the literal's text (no leading zeros in JSON): cheaper than a second parse.
CREATE OR REPLACE TEMP MACRO page_count_ok(x) AS
  coalesce(json_type(x) = 'UBIGINT'
    AND (length(x::VARCHAR) < 19 OR (length(x::VARCHAR) = 19 AND x::VARCHAR <= '9223372036854775807')), false);
CREATE OR REPLACE TEMP MACRO page_period_ok(p) AS
  p IS NOT NULL AND page_id_ok(p.period_id) AND page_id_ok(p.period_plan) AND page_time_ok(p.period_start)
  AND (p.period_end IS NULL OR page_time_ok(p.period_end)) AND p.consumption IS NOT NULL;
CREATE OR REPLACE TEMP MACRO page_bucket_ok(b) AS
  b IS NOT NULL AND page_time_ok(b.timeframe_start) AND page_time_ok(b.timeframe_end);
