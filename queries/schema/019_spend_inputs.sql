-- Migration 019: pricing a range reads only that range's usage, and the dataset export remembers what
-- each priced month was computed from.
-- 1. The frameworks a range's framework lines go to were chosen by spend_current_frameworks, which reads
--    every framework that ever had usage (the whole history) to keep those not deleted at frameworks_at.
--    A framework line's own usage row already proves the framework had usage, so the same set is "not
--    deleted before frameworks_at": an anti join on the frameworks table, with the same result at the
--    cost of the range.
-- 2. export_partitions.pricing_digest: what spend_daily reads of a file's rows, so that `export --dataset`
--    prices a month again only when what it is priced from changed (src/store/dataset.ts,
--    SPEND_PRICED_FROM_SQL). Every run that collects a closed month's window again rewrites its rows with
--    the same values under a new run_id: the usage file changes, its pricing digest does not.
-- Parameters: none.
CREATE OR REPLACE MACRO spend_framework_days_at(g, range_start, range_end, framework_metrics, frameworks_at) AS TABLE
SELECT b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day,
  CAST(sum(b.value) AS HUGEINT) AS qty_raw
FROM spend_framework_buckets b
ANTI JOIN (SELECT framework_id FROM frameworks WHERE deleted_at < frameworks_at) d ON d.framework_id = b.framework_id
WHERE b.granularity = g AND b.timeframe_start >= range_start AND b.timeframe_start < range_end
  AND list_contains(framework_metrics, b.metric)
GROUP BY b.program_id, b.framework_id, b.billing_month, b.period_id, b.metric, b.rate_id, b.usage_day
HAVING sum(b.value) <> 0;

ALTER TABLE export_partitions ADD COLUMN pricing_digest VARCHAR;
COMMENT ON COLUMN export_partitions.pricing_digest IS 'usage files: sum of row hashes without run_id and collected_at; spend_daily months: digest of what the month was priced from (its usage files'' pricing digests, its coverage, prices and names); NULL for dimensions and for files written before it was kept';
