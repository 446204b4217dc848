-- Migration 016: the alert rules' priced days keep the API version of their buckets, so that a run's
-- replaced windows (source, organization, days) are re-priced from the rows that run wrote alone.
-- Parameters: none. alert_priced_days is rebuilt empty and its state cleared: the next evaluation
-- prices the stored daily history once again, as after migration 015.
DROP TABLE alert_priced_days;
DELETE FROM alert_program_days;
DELETE FROM alert_priced_runs;
DELETE FROM alert_priced_state;

-- One row per API version, organization, program, UTC day, billing period, metric and rate of the
-- daily usage buckets, priced as spend_program_buckets (migration 004) prices them: plan period,
-- catalogue, rate in force. Quantities are kept beside the cents, so a rule can price one day's usage
-- at another day's rates.
CREATE TABLE alert_priced_days (
  api_version  VARCHAR     NOT NULL,
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

COMMENT ON TABLE alert_priced_days IS 'The alert rules'' input: daily usage buckets summed by API version, organization, program, UTC day, billing period, metric and rate, priced at list rates before allowances; kept up to date by each alerts evaluation.';
COMMENT ON COLUMN alert_priced_days.api_version IS 'v1 | v2: the endpoint the buckets were read from';
COMMENT ON COLUMN alert_priced_days.usage_day IS 'UTC day of the daily bucket';
COMMENT ON COLUMN alert_priced_days.period_start IS 'earliest start of the billing period''s rows that day';
COMMENT ON COLUMN alert_priced_days.aggregation IS 'sum | max (a gauge billed on its peak), from price_metrics';
COMMENT ON COLUMN alert_priced_days.rate_micro IS 'the rate in force (price_rates.rate_micro), micro-dollars per billing unit';
COMMENT ON COLUMN alert_priced_days.divisor IS 'raw units per billing unit (price_metrics.divisor)';
COMMENT ON COLUMN alert_priced_days.qty IS 'sum of the day''s raw values';
COMMENT ON COLUMN alert_priced_days.peak IS 'largest raw value of the day';
COMMENT ON COLUMN alert_priced_days.cents IS 'the day''s spend at list rates before allowances, each bucket rounded to cents (spend_cents)';
COMMENT ON COLUMN alert_priced_days.bucket_rows IS 'daily bucket rows summed into this row';
