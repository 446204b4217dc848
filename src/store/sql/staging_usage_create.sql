-- Query: staging_usage_create
-- Parameters: none. The staging table of one usage batch. TEMP: it lives on the batch's own
-- connection and never in the database file, so a crash cannot leave staged rows behind.
-- Column order is the order src/store/usageBatch.ts appends in.
CREATE OR REPLACE TEMP TABLE staging_usage (
  org_id          VARCHAR,
  program_id      VARCHAR     NOT NULL,
  framework_id    VARCHAR,               -- set for usage_framework batches only
  period_id       VARCHAR     NOT NULL,
  period_plan     VARCHAR     NOT NULL,
  period_start    TIMESTAMPTZ NOT NULL,
  period_end      TIMESTAMPTZ,
  timeframe_start TIMESTAMPTZ NOT NULL,
  timeframe_end   TIMESTAMPTZ NOT NULL,
  metric          VARCHAR     NOT NULL,
  value           BIGINT      NOT NULL
);
