-- Migration 020: the bucket tables' row counts, kept with the rows. `status` counted every bucket row
-- (count(*) reads each row group's metadata: 45-93 ms at 7 days of one organization of `large`, 97-134 ms
-- at 91 days, more every day); it now reads two rows. Every write of a bucket table changes its count in
-- the same transaction (store/usageBatch.ts, store/facade/usage.ts); this counts what is there once.
-- Parameters: none.
CREATE TABLE usage_row_counts (
  table_name VARCHAR NOT NULL,
  row_count  BIGINT  NOT NULL
);
INSERT INTO usage_row_counts
SELECT 'usage_program_buckets', count(*) FROM usage_program_buckets
UNION ALL
SELECT 'usage_framework_buckets', count(*) FROM usage_framework_buckets;

COMMENT ON TABLE usage_row_counts IS 'Rows each bucket table holds, changed in the same transaction as the rows (what status shows).';
COMMENT ON COLUMN usage_row_counts.table_name IS 'usage_program_buckets or usage_framework_buckets';
COMMENT ON COLUMN usage_row_counts.row_count IS 'rows of that table';
