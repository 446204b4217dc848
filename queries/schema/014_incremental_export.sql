-- Migration 014: what each dataset export took in, so that the next one works only on what changed,
-- and the record of what retention removed.
-- Parameters: none. Adds tables only; an existing dataset's first export under this release is a full
-- one (its layout changes: hourly files by day), every later one incremental.

-- The runs whose coverage windows a dataset folder has taken in: a window a run replaced after the
-- last export is what the next export rewrites.
CREATE TABLE export_runs (
  dataset_dir VARCHAR NOT NULL,
  run_id      VARCHAR NOT NULL,
  PRIMARY KEY (dataset_dir, run_id)
);

-- One row per dataset folder: the layout it was written in, and the digest of what the priced daily
-- lines depend on besides usage (prices, program and framework names and lifetimes).
CREATE TABLE export_datasets (
  dataset_dir    VARCHAR     NOT NULL PRIMARY KEY,
  layout         VARCHAR     NOT NULL,
  context_digest VARCHAR     NOT NULL,
  exported_at    TIMESTAMPTZ NOT NULL
);

-- What `prune` removed: one row per granularity, table and range, under the prune's run.
CREATE TABLE usage_removals (
  run_id      VARCHAR     NOT NULL,
  table_name  VARCHAR     NOT NULL,
  granularity VARCHAR     NOT NULL,
  range_start TIMESTAMPTZ NOT NULL,
  range_end   TIMESTAMPTZ NOT NULL,
  rows        BIGINT      NOT NULL,
  removed_at  TIMESTAMPTZ NOT NULL
);

COMMENT ON TABLE export_runs IS 'The runs whose replaced windows each dataset folder (export --dataset) has taken in: the next export rewrites only the partitions of later runs'' windows.';
COMMENT ON COLUMN export_runs.dataset_dir IS 'absolute path of the dataset root';
COMMENT ON COLUMN export_runs.run_id IS 'collection_runs.run_id';
COMMENT ON TABLE export_datasets IS 'One row per dataset folder: its file layout and what its priced daily lines were computed with.';
COMMENT ON COLUMN export_datasets.dataset_dir IS 'absolute path of the dataset root';
COMMENT ON COLUMN export_datasets.layout IS 'file layout version; a different one makes the next export a full one';
COMMENT ON COLUMN export_datasets.context_digest IS 'digest of the prices and of the inventory columns the priced lines carry: a change rewrites every spend_daily month whose rows differ';
COMMENT ON COLUMN export_datasets.exported_at IS 'when the folder was last exported, UTC';
COMMENT ON TABLE usage_removals IS 'What prune removed (retention, [store.retention]): hourly rows only, once the dataset held them.';
COMMENT ON COLUMN usage_removals.run_id IS 'collection_runs.run_id of the prune (command prune)';
COMMENT ON COLUMN usage_removals.table_name IS 'usage_program_buckets or usage_framework_buckets';
COMMENT ON COLUMN usage_removals.granularity IS 'always hourly';
COMMENT ON COLUMN usage_removals.range_start IS 'first timeframe_start removed (inclusive), UTC';
COMMENT ON COLUMN usage_removals.range_end IS 'end of the removed range (exclusive), UTC';
COMMENT ON COLUMN usage_removals.rows IS 'bucket rows removed';
COMMENT ON COLUMN usage_removals.removed_at IS 'when, UTC';
COMMENT ON COLUMN export_partitions.partition IS 'file below the root without its extension, e.g. usage_program/granularity=hourly/month=2026-10/part-2026-10-05 (hourly usage: a file a day; other partitions: part-0)';
