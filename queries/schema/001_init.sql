-- Migration 001: the initial schema.
-- Parameters: none. Applied once by src/store/migrations.ts inside a transaction; the
-- runner records it in schema_migrations. Every time column is TIMESTAMPTZ in UTC.

-- Long fact tables: one row per non-zero metric value exactly as the API reported it (absent
-- means 0, and an explicit 0 is stored as absent, so the same usage always gives the same rows). A bucket that straddles a plan change appears
-- once per period: the key includes period_id.
-- Key: (api_version, granularity, program_id, period_id, timeframe_start, metric).
CREATE TABLE usage_program (
  api_version     VARCHAR     NOT NULL,  -- 'v1' (legacy endpoint) or 'v2'
  granularity     VARCHAR     NOT NULL,  -- 'hourly' | 'daily' | 'monthly'
  org_id          VARCHAR,               -- NULL when the API did not say (v1 without org_id)
  program_id      VARCHAR     NOT NULL,
  period_id       VARCHAR     NOT NULL,
  period_plan     VARCHAR     NOT NULL,
  period_start    TIMESTAMPTZ NOT NULL,
  period_end      TIMESTAMPTZ,           -- NULL for the current period
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  metric          VARCHAR     NOT NULL,
  value           BIGINT      NOT NULL,  -- exact int64, as reported
  run_id          VARCHAR     NOT NULL,  -- collection_runs.run_id that last wrote the row
  collected_at    TIMESTAMPTZ NOT NULL
);

-- Key: (granularity, framework_id, period_id, timeframe_start, metric).
CREATE TABLE usage_framework (
  granularity     VARCHAR     NOT NULL,
  org_id          VARCHAR,
  program_id      VARCHAR     NOT NULL,
  framework_id    VARCHAR     NOT NULL,
  period_id       VARCHAR     NOT NULL,
  period_plan     VARCHAR     NOT NULL,
  period_start    TIMESTAMPTZ NOT NULL,
  period_end      TIMESTAMPTZ,
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  metric          VARCHAR     NOT NULL,
  value           BIGINT      NOT NULL,
  run_id          VARCHAR     NOT NULL,
  collected_at    TIMESTAMPTZ NOT NULL
);

-- Dimensions. Rows are never deleted: an item the listing no longer returns keeps its row
-- with deleted_at set (it is still billed for the time it existed).
CREATE TABLE programs (
  program_id    VARCHAR PRIMARY KEY,
  org_id        VARCHAR,
  name          VARCHAR,
  region_id     VARCHAR,
  created_at    TIMESTAMPTZ,
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_seen_at  TIMESTAMPTZ NOT NULL,
  deleted_at    TIMESTAMPTZ            -- first inventory run that no longer listed it
);

CREATE TABLE frameworks (
  framework_id  VARCHAR PRIMARY KEY,
  program_id    VARCHAR NOT NULL,
  name          VARCHAR,
  current_state VARCHAR,
  created_at    TIMESTAMPTZ,
  first_seen_at TIMESTAMPTZ NOT NULL,
  last_seen_at  TIMESTAMPTZ NOT NULL,
  deleted_at    TIMESTAMPTZ
);

CREATE TABLE snapshots (
  snapshot_id         VARCHAR PRIMARY KEY,
  program_id          VARCHAR NOT NULL,
  name                VARCHAR,
  source_framework_id VARCHAR,
  created_at          TIMESTAMPTZ,
  manual              BOOLEAN,
  expires_at          TIMESTAMPTZ,
  first_seen_at       TIMESTAMPTZ NOT NULL,
  last_seen_at        TIMESTAMPTZ NOT NULL,
  deleted_at          TIMESTAMPTZ
);

-- One row per invocation of collect (or inventory refresh).
CREATE TABLE collection_runs (
  run_id       VARCHAR PRIMARY KEY,
  command      VARCHAR NOT NULL,       -- 'collect' | 'inventory'
  started_at   TIMESTAMPTZ NOT NULL,
  finished_at  TIMESTAMPTZ,
  status       VARCHAR NOT NULL,       -- 'running' | 'complete' | 'partial' | 'failed'
  requests     BIGINT NOT NULL DEFAULT 0,
  retries      BIGINT NOT NULL DEFAULT 0,
  throttled    BIGINT NOT NULL DEFAULT 0,  -- 429 answers received
  pages        BIGINT NOT NULL DEFAULT 0,
  rows_loaded  BIGINT NOT NULL DEFAULT 0,
  error        VARCHAR,
  options      VARCHAR                 -- JSON of the effective options, no secrets
);

-- What was collected: one row per (source, granularity, scope, window) fetched and committed.
-- scope is an org id, 'all' (v1 without org), or 'programs:<first>..<last>#<n>' for a frameworks batch.
CREATE TABLE coverage (
  source       VARCHAR     NOT NULL,   -- 'v1_programs' | 'v2_programs' | 'v2_frameworks'
  granularity  VARCHAR     NOT NULL,
  scope        VARCHAR     NOT NULL,
  window_start TIMESTAMPTZ NOT NULL,
  window_end   TIMESTAMPTZ NOT NULL,   -- exclusive
  status       VARCHAR     NOT NULL,   -- 'complete' | 'partial' (in-progress bucket included) | 'not_eligible' | 'failed'
  rows         BIGINT      NOT NULL,
  run_id       VARCHAR     NOT NULL,
  collected_at TIMESTAMPTZ NOT NULL,
  detail       VARCHAR                 -- error or reason, for failed and not_eligible
);
