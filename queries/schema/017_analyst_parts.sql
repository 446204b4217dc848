-- Migration 017: the analyst copy's large tables as Parquet parts beside it, so that publishing after a
-- run writes only the parts the run changed (store/publish.ts) instead of copying the whole database.
-- Parameters: none. Adds tables only; the first publish under this release writes every part once.

-- Which file holds each part now (one per table and part key; a part with no rows has none).
CREATE TABLE analyst_parts (
  table_name VARCHAR NOT NULL,
  part       VARCHAR NOT NULL,
  file       VARCHAR NOT NULL,
  rows       BIGINT  NOT NULL,
  PRIMARY KEY (table_name, part)
);

-- The parts a write changed since the last publish, written in the same transaction as the change.
-- part '*': the whole table (its parts are listed again).
CREATE TABLE analyst_dirty (
  table_name VARCHAR NOT NULL,
  part       VARCHAR NOT NULL
);

-- Each parted table's columns as last written: other columns (a migration) rewrite all its parts.
CREATE TABLE analyst_tables (
  table_name VARCHAR NOT NULL PRIMARY KEY,
  columns    VARCHAR NOT NULL
);

-- Files a publish replaced: removed once a newer copy has been published for the grace period, so a
-- session opened on the previous copy keeps reading them. retired_at is NULL until that copy is in place.
CREATE TABLE analyst_retired (
  file       VARCHAR NOT NULL PRIMARY KEY,
  retired_at TIMESTAMPTZ
);

-- Every existing table is dirty: the first publish writes it whole.
INSERT INTO analyst_dirty VALUES
  ('usage_program_buckets', '*'), ('usage_framework_buckets', '*'), ('alert_priced_days', '*'),
  ('alert_program_days', '*'), ('report_finalized_lines', '*'), ('report_focus_finalized', '*'),
  ('report_finalized_program_spend', '*'), ('report_finalized_framework_spend', '*'),
  ('report_finalized_snapshot_storage', '*'), ('report_finalized_transfer', '*'), ('report_finalized_daily', '*');

COMMENT ON TABLE analyst_parts IS 'The analyst copy''s large tables as Parquet files beside it (<name>.analyst.parts/): the file that holds each part now.';
COMMENT ON COLUMN analyst_parts.table_name IS 'usage_program_buckets, usage_framework_buckets, alert_priced_days, alert_program_days, report_focus_finalized, report_finalized_lines or another report_finalized_ table of report lines';
COMMENT ON COLUMN analyst_parts.part IS 'hourly usage: granularity/YYYY-MM-DD; daily and monthly usage: granularity/YYYY-MM; priced days: YYYY-MM-DD; finalised rows: finalization_id';
COMMENT ON COLUMN analyst_parts.file IS 'path below the parts folder; never rewritten (a changed part gets a new file)';
COMMENT ON COLUMN analyst_parts.rows IS 'rows in the file';
COMMENT ON TABLE analyst_dirty IS 'Parts changed since the analyst copy was last published (written with the change); the next publish rewrites them.';
COMMENT ON COLUMN analyst_dirty.table_name IS 'as analyst_parts.table_name';
COMMENT ON COLUMN analyst_dirty.part IS 'as analyst_parts.part, or * for every part of the table';
COMMENT ON TABLE analyst_tables IS 'The columns each parted table''s files were written with.';
COMMENT ON COLUMN analyst_tables.table_name IS 'as analyst_parts.table_name';
COMMENT ON COLUMN analyst_tables.columns IS 'name and type of each column, in order';
COMMENT ON TABLE analyst_retired IS 'Part files a publish replaced, removed one hour after the copy that no longer names them was published.';
COMMENT ON COLUMN analyst_retired.file IS 'path below the parts folder';
COMMENT ON COLUMN analyst_retired.retired_at IS 'when the copy that no longer names the file was published, UTC (NULL: not yet)';
