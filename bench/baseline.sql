-- Query: the naive baseline's tables and its row-by-row INSERTs (bench/baseline.ts).
-- Tables have the shape of usage_program / usage_framework in queries/schema/001_init.sql.
-- Parameters of the INSERTs: $1.. the row's columns in table order (times as ISO text, value as BIGINT).
CREATE TABLE IF NOT EXISTS naive_usage_program (
  api_version VARCHAR NOT NULL, granularity VARCHAR NOT NULL, org_id VARCHAR, program_id VARCHAR NOT NULL,
  period_id VARCHAR NOT NULL, period_plan VARCHAR NOT NULL, period_start TIMESTAMPTZ NOT NULL, period_end TIMESTAMPTZ,
  timeframe_start TIMESTAMPTZ NOT NULL, timeframe_end TIMESTAMPTZ NOT NULL, metric VARCHAR NOT NULL,
  value BIGINT NOT NULL, run_id VARCHAR NOT NULL, collected_at TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS naive_usage_framework (
  granularity VARCHAR NOT NULL, org_id VARCHAR, program_id VARCHAR NOT NULL, framework_id VARCHAR NOT NULL,
  period_id VARCHAR NOT NULL, period_plan VARCHAR NOT NULL, period_start TIMESTAMPTZ NOT NULL, period_end TIMESTAMPTZ,
  timeframe_start TIMESTAMPTZ NOT NULL, timeframe_end TIMESTAMPTZ NOT NULL, metric VARCHAR NOT NULL,
  value BIGINT NOT NULL, run_id VARCHAR NOT NULL, collected_at TIMESTAMPTZ NOT NULL
);
-- @insert_program
INSERT INTO naive_usage_program VALUES ($1, $2, $3, $4, $5, $6, CAST($7 AS TIMESTAMPTZ), CAST($8 AS TIMESTAMPTZ),
  CAST($9 AS TIMESTAMPTZ), CAST($10 AS TIMESTAMPTZ), $11, $12, $13, CAST($14 AS TIMESTAMPTZ));
-- @insert_framework
INSERT INTO naive_usage_framework VALUES ($1, $2, $3, $4, $5, $6, CAST($7 AS TIMESTAMPTZ), CAST($8 AS TIMESTAMPTZ),
  CAST($9 AS TIMESTAMPTZ), CAST($10 AS TIMESTAMPTZ), $11, $12, $13, CAST($14 AS TIMESTAMPTZ));
