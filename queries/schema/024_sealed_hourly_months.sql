-- Migration 024: the analyst copy's hourly usage in month parts once a month is sealed. A publish
-- (store/publish.ts) writes the hourly days of a UTC month as one part once its end lies 192 hours before
-- the newest hourly day collected (the API serves hourly data for 168 hours), one month a publish, so the
-- copy's views name a file a month rather than a day for all but the last weeks.
-- Parameters: none. Only a comment changes.
COMMENT ON COLUMN analyst_parts.part IS 'hourly usage: granularity/YYYY-MM-DD, or granularity/YYYY-MM once the month is sealed (192 hours after its end); daily and monthly usage: granularity/YYYY-MM; priced days: YYYY-MM-DD; finalised rows: finalization_id';
