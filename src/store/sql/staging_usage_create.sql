-- Query: staging_usage_create
-- Parameters: none. The staging tables of one usage batch: its bucket rows (one per bucket and period,
-- one column per metric, NULL = not reported) and the plan periods they name by a batch-local number.
-- TEMP: they live on the batch's own connection (DuckDB spills them to <db>.tmp/ beyond memory_limit,
-- never to the JavaScript heap) and never in the database file, so a crash cannot leave staged rows.
-- Column order is the order src/store/usageBatch.ts appends in; metrics in the order of
-- src/store/wideRows.ts METRIC_COLUMNS.
CREATE OR REPLACE TEMP TABLE staging_usage (
  org_id          VARCHAR,
  program_id      VARCHAR     NOT NULL,
  framework_id    VARCHAR,               -- set for usage_framework batches only
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
CREATE OR REPLACE TEMP TABLE staging_periods (
  period_local INTEGER     NOT NULL,
  period_id    VARCHAR     NOT NULL,
  period_plan  VARCHAR     NOT NULL,
  period_start TIMESTAMPTZ NOT NULL,
  period_end   TIMESTAMPTZ
);
