-- Query: staging_usage_create
-- Parameters: none. The staging of one usage batch: its bucket rows (one per bucket and period, one
-- column per metric, NULL = not reported), the ids they belong to, and the plan periods they name by a
-- batch-local number. A row names its organization, program and framework by a batch-local item number
-- (staging_items): writing three id strings per row cost more than the row's metrics
-- (BENCHMARKS.md, "Ids by batch-local item number (2026-11-23)"). staging_usage is the rows with their ids, as every check and insert
-- reads them. TEMP: they live on the batch's own connection (DuckDB spills them to <db>.tmp/ beyond
-- memory_limit, never to the JavaScript heap) and never in the database file, so a crash cannot leave
-- staged rows. Column order is the order src/store/wideChunkWriter.ts appends in; metrics in the order of
-- src/page/pageRows.ts METRIC_COLUMNS.
CREATE OR REPLACE TEMP TABLE staging_items (
  item         INTEGER NOT NULL,
  org_id       VARCHAR,
  program_id   VARCHAR NOT NULL,
  framework_id VARCHAR             -- set for usage_framework batches only
);
CREATE OR REPLACE TEMP TABLE staging_rows (
  item            INTEGER     NOT NULL,  -- staging_items.item
  period_local    INTEGER     NOT NULL,  -- staging_periods.period_local
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  compute_unit_seconds           BIGINT,
  root_branch_bytes_month        BIGINT,
  child_branch_bytes_month       BIGINT,
  instant_restore_bytes_month    BIGINT,
  public_network_transfer_bytes  BIGINT,
  private_network_transfer_bytes BIGINT,
  extra_branches_month           BIGINT,
  snapshot_storage_bytes_month   BIGINT,
  active_time_seconds            BIGINT,
  compute_time_seconds           BIGINT,
  written_data_bytes             BIGINT,
  synthetic_storage_size_bytes   BIGINT,
  data_storage_bytes_hour        BIGINT,
  logical_size_bytes             BIGINT,
  logical_size_bytes_hour        BIGINT
);
CREATE OR REPLACE TEMP VIEW staging_usage AS
SELECT i.org_id, i.program_id, i.framework_id, r.period_local, r.timeframe_start, r.timeframe_end,
       r.compute_unit_seconds, r.root_branch_bytes_month, r.child_branch_bytes_month, r.instant_restore_bytes_month, r.public_network_transfer_bytes, r.private_network_transfer_bytes, r.extra_branches_month, r.snapshot_storage_bytes_month, r.active_time_seconds, r.compute_time_seconds, r.written_data_bytes, r.synthetic_storage_size_bytes, r.data_storage_bytes_hour, r.logical_size_bytes, r.logical_size_bytes_hour
FROM staging_rows r JOIN staging_items i USING (item);
CREATE OR REPLACE TEMP TABLE staging_periods (
  period_local INTEGER     NOT NULL,
  period_id    VARCHAR     NOT NULL,
  period_plan  VARCHAR     NOT NULL,
  period_start TIMESTAMPTZ NOT NULL,
  period_end   TIMESTAMPTZ
);
