-- Migration 010: usage stored one row per bucket with a BIGINT column per metric, plan periods in their
-- own table; usage_program and usage_framework become views with exactly the columns they had.
-- Parameters: none. Converts a file written by the earlier schema in place, keeping every value: the
-- long rows of a bucket (same key, same run) become one row, each metric in its own column.
-- Why (ARCHITECTURE.md, "Storage"): a long row repeated ids, period and run strings for every value;
-- a bucket row carries them once, so loading and storing cost about a fifth as much per value.

-- Each distinct plan period as the API reported it (an open period that later gets its end is a new
-- row: each bucket keeps the period exactly as it was collected).
CREATE TABLE billing_periods (
  period_key   INTEGER     NOT NULL PRIMARY KEY,
  period_id    VARCHAR     NOT NULL,
  period_plan  VARCHAR     NOT NULL,
  period_start TIMESTAMPTZ NOT NULL,
  period_end   TIMESTAMPTZ             -- NULL for the current period
);

-- One row per (api_version, granularity, program_id, period, timeframe_start); NULL = not reported
-- (absent, or an explicit 0 from the API: the same usage always gives the same rows).
CREATE TABLE usage_program_buckets (
  api_version     VARCHAR     NOT NULL,
  granularity     VARCHAR     NOT NULL,
  org_id          VARCHAR,
  program_id      VARCHAR     NOT NULL,
  period_key      INTEGER     NOT NULL,
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  run_id          VARCHAR     NOT NULL,
  collected_at    TIMESTAMPTZ NOT NULL,
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

CREATE TABLE usage_framework_buckets (
  granularity     VARCHAR     NOT NULL,
  org_id          VARCHAR,
  program_id      VARCHAR     NOT NULL,
  framework_id    VARCHAR     NOT NULL,
  period_key      INTEGER     NOT NULL,
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  run_id          VARCHAR     NOT NULL,
  collected_at    TIMESTAMPTZ NOT NULL,
  compute_unit_seconds           BIGINT,
  root_branch_bytes_month        BIGINT,
  child_branch_bytes_month       BIGINT,
  instant_restore_bytes_month    BIGINT,
  public_network_transfer_bytes  BIGINT,
  private_network_transfer_bytes BIGINT
);

-- A metric the columns do not hold would be lost: the migration stops (and is rolled back) instead.
SELECT CASE WHEN count(*) > 0
  THEN error('usage_program holds metrics this release has no column for: ' || string_agg(DISTINCT metric, ', ')) END
FROM usage_program
WHERE metric NOT IN ('compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month',
  'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes',
  'extra_branches_month', 'snapshot_storage_bytes_month', 'active_time_seconds', 'compute_time_seconds',
  'written_data_bytes', 'synthetic_storage_size_bytes', 'data_storage_bytes_hour', 'logical_size_bytes',
  'logical_size_bytes_hour');
SELECT CASE WHEN count(*) > 0
  THEN error('usage_framework holds metrics this release has no column for: ' || string_agg(DISTINCT metric, ', ')) END
FROM usage_framework
WHERE metric NOT IN ('compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month',
  'instant_restore_bytes_month', 'public_network_transfer_bytes', 'private_network_transfer_bytes');

INSERT INTO billing_periods
SELECT row_number() OVER (ORDER BY period_id, period_plan, period_start, period_end NULLS FIRST), *
FROM (SELECT DISTINCT period_id, period_plan, period_start, period_end FROM usage_program
      UNION SELECT DISTINCT period_id, period_plan, period_start, period_end FROM usage_framework);

-- A key holds one value per metric (the old batches refused duplicates), so max() picks that value.
INSERT INTO usage_program_buckets
SELECT u.api_version, u.granularity, u.org_id, u.program_id, p.period_key, u.timeframe_start, u.timeframe_end,
       u.run_id, u.collected_at,
       max(u.value) FILTER (WHERE u.metric = 'compute_unit_seconds'),
       max(u.value) FILTER (WHERE u.metric = 'root_branch_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'child_branch_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'instant_restore_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'public_network_transfer_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'private_network_transfer_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'extra_branches_month'),
       max(u.value) FILTER (WHERE u.metric = 'snapshot_storage_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'active_time_seconds'),
       max(u.value) FILTER (WHERE u.metric = 'compute_time_seconds'),
       max(u.value) FILTER (WHERE u.metric = 'written_data_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'synthetic_storage_size_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'data_storage_bytes_hour'),
       max(u.value) FILTER (WHERE u.metric = 'logical_size_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'logical_size_bytes_hour')
FROM usage_program u
JOIN billing_periods p
  ON p.period_id = u.period_id AND p.period_plan = u.period_plan AND p.period_start = u.period_start
 AND p.period_end IS NOT DISTINCT FROM u.period_end
GROUP BY u.api_version, u.granularity, u.org_id, u.program_id, p.period_key, u.timeframe_start, u.timeframe_end,
         u.run_id, u.collected_at;

INSERT INTO usage_framework_buckets
SELECT u.granularity, u.org_id, u.program_id, u.framework_id, p.period_key, u.timeframe_start, u.timeframe_end,
       u.run_id, u.collected_at,
       max(u.value) FILTER (WHERE u.metric = 'compute_unit_seconds'),
       max(u.value) FILTER (WHERE u.metric = 'root_branch_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'child_branch_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'instant_restore_bytes_month'),
       max(u.value) FILTER (WHERE u.metric = 'public_network_transfer_bytes'),
       max(u.value) FILTER (WHERE u.metric = 'private_network_transfer_bytes')
FROM usage_framework u
JOIN billing_periods p
  ON p.period_id = u.period_id AND p.period_plan = u.period_plan AND p.period_start = u.period_start
 AND p.period_end IS NOT DISTINCT FROM u.period_end
GROUP BY u.granularity, u.org_id, u.program_id, u.framework_id, p.period_key, u.timeframe_start, u.timeframe_end,
         u.run_id, u.collected_at;

DROP TABLE usage_program;
DROP TABLE usage_framework;

-- The analysts' long form, with exactly the columns and types the tables had. UNPIVOT leaves out NULL
-- cells, so a metric that was not reported has no row, as before.
CREATE VIEW usage_program AS
SELECT u.api_version, u.granularity, u.org_id, u.program_id, p.period_id, p.period_plan, p.period_start, p.period_end,
       u.timeframe_start, u.timeframe_end, u.metric, u.value, u.run_id, u.collected_at
FROM (UNPIVOT usage_program_buckets
      ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes, extra_branches_month,
         snapshot_storage_bytes_month, active_time_seconds, compute_time_seconds, written_data_bytes,
         synthetic_storage_size_bytes, data_storage_bytes_hour, logical_size_bytes, logical_size_bytes_hour
      INTO NAME metric VALUE value) u
JOIN billing_periods p ON p.period_key = u.period_key;

CREATE VIEW usage_framework AS
SELECT u.granularity, u.org_id, u.program_id, u.framework_id, p.period_id, p.period_plan, p.period_start, p.period_end,
       u.timeframe_start, u.timeframe_end, u.metric, u.value, u.run_id, u.collected_at
FROM (UNPIVOT usage_framework_buckets
      ON compute_unit_seconds, root_branch_bytes_month, child_branch_bytes_month, instant_restore_bytes_month,
         public_network_transfer_bytes, private_network_transfer_bytes
      INTO NAME metric VALUE value) u
JOIN billing_periods p ON p.period_key = u.period_key;

-- The wide views read the bucket rows directly: a row with no metric reported is never stored.
CREATE OR REPLACE VIEW usage_program_wide AS
SELECT u.api_version, u.granularity, u.org_id, u.program_id, p.period_id, p.period_plan, u.timeframe_start, u.timeframe_end,
       u.compute_unit_seconds, u.root_branch_bytes_month, u.child_branch_bytes_month, u.instant_restore_bytes_month,
       u.public_network_transfer_bytes, u.private_network_transfer_bytes, u.extra_branches_month,
       u.snapshot_storage_bytes_month, u.active_time_seconds, u.compute_time_seconds, u.written_data_bytes,
       u.synthetic_storage_size_bytes, u.data_storage_bytes_hour, u.logical_size_bytes, u.logical_size_bytes_hour
FROM usage_program_buckets u
JOIN billing_periods p ON p.period_key = u.period_key;

CREATE OR REPLACE VIEW usage_framework_wide AS
SELECT u.granularity, u.org_id, u.program_id, u.framework_id, p.period_id, p.period_plan, u.timeframe_start, u.timeframe_end,
       u.compute_unit_seconds, u.root_branch_bytes_month, u.child_branch_bytes_month, u.instant_restore_bytes_month,
       u.public_network_transfer_bytes, u.private_network_transfer_bytes
FROM usage_framework_buckets u
JOIN billing_periods p ON p.period_key = u.period_key;

CREATE OR REPLACE VIEW usage_program_hourly AS SELECT * FROM usage_program_wide WHERE granularity = 'hourly';
CREATE OR REPLACE VIEW usage_program_daily AS SELECT * FROM usage_program_wide WHERE granularity = 'daily';
CREATE OR REPLACE VIEW usage_program_monthly AS SELECT * FROM usage_program_wide WHERE granularity = 'monthly';
CREATE OR REPLACE VIEW usage_framework_hourly AS SELECT * FROM usage_framework_wide WHERE granularity = 'hourly';
CREATE OR REPLACE VIEW usage_framework_daily AS SELECT * FROM usage_framework_wide WHERE granularity = 'daily';
CREATE OR REPLACE VIEW usage_framework_monthly AS SELECT * FROM usage_framework_wide WHERE granularity = 'monthly';
