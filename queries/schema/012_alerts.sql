-- Migration 012: spend alerts (budgets and anomalies), their webhook deliveries, and the
-- organizations' spending limits as last read from the API.
-- Parameters: none. An alert is fired once: its identity (kind, scope, month, threshold, program,
-- day) is its primary key, and a later evaluation never inserts it again; when the data it rests on
-- is restated so that it no longer holds, it is marked superseded, never deleted.
CREATE TABLE IF NOT EXISTS alerts (
  alert_id            VARCHAR PRIMARY KEY,
  identity            VARCHAR NOT NULL UNIQUE,
  kind                VARCHAR NOT NULL,
  rule                VARCHAR NOT NULL,
  rule_version        INTEGER NOT NULL,
  month               DATE NOT NULL,
  scope_kind          VARCHAR NOT NULL,
  scope_id            VARCHAR NOT NULL,
  threshold_pct       INTEGER,
  day                 DATE,
  org_id              VARCHAR,
  org_name            VARCHAR,
  program_id          VARCHAR,
  program_name        VARCHAR,
  budget_usd          DECIMAL(18,2),
  threshold_usd       DECIMAL(18,2),
  expected_usd        DECIMAL(18,2),
  actual_usd          DECIMAL(18,2),
  impact_usd          DECIMAL(18,2),
  impact_pct          DECIMAL(18,2),
  score               DOUBLE,
  crossing_date       DATE,
  compute_usd         DECIMAL(18,2),
  storage_usd         DECIMAL(18,2),
  instant_restore_usd DECIMAL(18,2),
  snapshots_usd       DECIMAL(18,2),
  transfer_usd        DECIMAL(18,2),
  extra_branches_usd  DECIMAL(18,2),
  other_usd           DECIMAL(18,2),
  message             VARCHAR NOT NULL,
  detail              VARCHAR NOT NULL,
  status              VARCHAR NOT NULL,
  fired_at            TIMESTAMPTZ NOT NULL,
  superseded_at       TIMESTAMPTZ,
  superseded_reason   VARCHAR
);

CREATE TABLE IF NOT EXISTS alert_deliveries (
  alert_id     VARCHAR NOT NULL,
  attempt      INTEGER NOT NULL,
  attempted_at TIMESTAMPTZ NOT NULL,
  target       VARCHAR NOT NULL,
  http_status  INTEGER,
  outcome      VARCHAR NOT NULL,
  error        VARCHAR,
  PRIMARY KEY (alert_id, attempt)
);

CREATE TABLE IF NOT EXISTS org_spending_limits (
  org_id      VARCHAR PRIMARY KEY,
  limit_cents BIGINT,
  answer      VARCHAR NOT NULL,
  read_at     TIMESTAMPTZ NOT NULL
);
