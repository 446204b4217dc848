-- Migration 015: the alert rules' input kept priced by day, and alert acknowledgements.
-- Parameters: none. Adds tables only. alert_priced_days is filled by the alerts' evaluation
-- (src/store/sql/alert_priced_days_fill.sql): the first one under this release prices the stored
-- daily history once; later ones re-price only the days of windows a run replaced since, and
-- everything again when the prices change.

-- One row per organization, program, UTC day, billing period, metric and rate of the daily usage
-- buckets, priced as spend_program_buckets (migration 004) prices them: plan period, catalogue,
-- rate in force. Quantities are kept beside the cents, so a rule can price one day's usage at
-- another day's rates.
CREATE TABLE alert_priced_days (
  org_id       VARCHAR,
  program_id   VARCHAR     NOT NULL,
  usage_day    DATE        NOT NULL,
  period_id    VARCHAR     NOT NULL,
  period_plan  VARCHAR     NOT NULL,
  period_start TIMESTAMPTZ NOT NULL,
  metric       VARCHAR     NOT NULL,
  aggregation  VARCHAR     NOT NULL,
  rate_id      VARCHAR     NOT NULL,
  rate_micro   HUGEINT     NOT NULL,
  divisor      HUGEINT     NOT NULL,
  qty          HUGEINT     NOT NULL,
  peak         HUGEINT     NOT NULL,
  cents        BIGINT      NOT NULL,
  bucket_rows  INTEGER     NOT NULL
);

-- The same days summed by organization, program and day, for the rules that need no more: the spend
-- of the summed metrics (an anomaly's day and baseline), the key of the rates it was priced at, and
-- the spend of the lines no included allowance applies to (a budget's). Filled with alert_priced_days.
CREATE TABLE alert_program_days (
  org_id      VARCHAR,
  program_id  VARCHAR NOT NULL,
  usage_day   DATE    NOT NULL,
  cents       BIGINT  NOT NULL,
  rates_key   VARCHAR,
  plain_cents BIGINT  NOT NULL
);

-- The runs whose replaced daily windows alert_priced_days has taken in.
CREATE TABLE alert_priced_runs (
  run_id VARCHAR NOT NULL PRIMARY KEY
);

-- One row: the digest of the prices alert_priced_days was priced with.
CREATE TABLE alert_priced_state (
  k             INTEGER     NOT NULL PRIMARY KEY,
  prices_digest VARCHAR     NOT NULL,
  priced_at     TIMESTAMPTZ NOT NULL
);

-- An acknowledged alert stays as it is in alerts (open or superseded); `alerts --check` no longer
-- counts it.
CREATE TABLE alert_acks (
  alert_id        VARCHAR     NOT NULL PRIMARY KEY,
  acknowledged_at TIMESTAMPTZ NOT NULL,
  acknowledged_by VARCHAR     NOT NULL,
  note            VARCHAR
);

COMMENT ON TABLE alert_priced_days IS 'The alert rules'' input: daily usage buckets summed by organization, program, UTC day, billing period, metric and rate, priced at list rates before allowances; kept up to date by each alerts evaluation.';
COMMENT ON COLUMN alert_priced_days.usage_day IS 'UTC day of the daily bucket';
COMMENT ON COLUMN alert_priced_days.period_start IS 'earliest start of the billing period''s rows that day';
COMMENT ON COLUMN alert_priced_days.aggregation IS 'sum | max (a gauge billed on its peak), from price_metrics';
COMMENT ON COLUMN alert_priced_days.rate_micro IS 'the rate in force (price_rates.rate_micro), micro-dollars per billing unit';
COMMENT ON COLUMN alert_priced_days.divisor IS 'raw units per billing unit (price_metrics.divisor)';
COMMENT ON COLUMN alert_priced_days.qty IS 'sum of the day''s raw values';
COMMENT ON COLUMN alert_priced_days.peak IS 'largest raw value of the day';
COMMENT ON COLUMN alert_priced_days.cents IS 'the day''s spend at list rates before allowances, each bucket rounded to cents (spend_cents)';
COMMENT ON COLUMN alert_priced_days.bucket_rows IS 'daily bucket rows summed into this row';
COMMENT ON TABLE alert_program_days IS 'alert_priced_days summed by organization, program and UTC day (metrics billed by sum only): what the anomaly rule and the budgets read first.';
COMMENT ON COLUMN alert_program_days.cents IS 'the day''s spend of summed metrics at list rates before allowances (the anomaly rule''s day spend)';
COMMENT ON COLUMN alert_program_days.rates_key IS 'md5 of the plan and the ids of its rates in force that day, when every metric of the day has one bucket row priced at one of them; NULL otherwise. Days with the same key are priced at the same rates';
COMMENT ON COLUMN alert_program_days.plain_cents IS 'the spend of the day''s lines that no included allowance applies to, each line rounded to cents';
COMMENT ON TABLE alert_priced_runs IS 'The runs whose replaced daily windows alert_priced_days has taken in (coverage.run_id).';
COMMENT ON TABLE alert_priced_state IS 'One row: the digest of the price tables alert_priced_days was priced with; another digest re-prices it all.';
COMMENT ON TABLE alert_acks IS 'Acknowledged alerts (alerts --ack): who, when and why; `alerts --check` counts only open alerts not acknowledged.';
COMMENT ON COLUMN alert_acks.alert_id IS 'alerts.alert_id';
COMMENT ON COLUMN alert_acks.acknowledged_at IS 'when, UTC';
COMMENT ON COLUMN alert_acks.acknowledged_by IS 'who: --by, or the operating-system user who ran the command';
COMMENT ON COLUMN alert_acks.note IS 'free text (--note)';
