-- Query: price_tables
-- Parameters: none. Creates the session's price tables, which src/report/prices.ts fills from the
-- price book (config/prices.toml) with price_load_*.sql. TEMP: the price book, not the database,
-- is the source of truth, and each report names the revision it loaded.
CREATE OR REPLACE TEMP TABLE price_book (
  revision VARCHAR NOT NULL,
  currency VARCHAR NOT NULL,
  sha256   VARCHAR NOT NULL
);
CREATE OR REPLACE TEMP TABLE price_metrics (
  metric       VARCHAR PRIMARY KEY,
  api_version  VARCHAR NOT NULL,
  raw_unit     VARCHAR NOT NULL,
  billing_unit VARCHAR NOT NULL,
  divisor      HUGEINT NOT NULL,   -- raw units per billing unit
  aggregation  VARCHAR NOT NULL,   -- 'sum' | 'max' (gauges)
  source       VARCHAR NOT NULL
);
CREATE OR REPLACE TEMP TABLE price_rates (
  rate_id        VARCHAR PRIMARY KEY,
  plan           VARCHAR NOT NULL,
  metric         VARCHAR NOT NULL,
  rate           DECIMAL(18,6) NOT NULL,  -- currency per billing unit
  rate_micro     HUGEINT NOT NULL,        -- the same rate in millionths, for exact integer arithmetic
  effective_from TIMESTAMPTZ NOT NULL,    -- inclusive, UTC midnight
  effective_to   TIMESTAMPTZ,             -- exclusive; NULL = open-ended
  source         VARCHAR NOT NULL
);
CREATE OR REPLACE TEMP TABLE price_allowances (
  allowance_id   VARCHAR NOT NULL,
  plan           VARCHAR NOT NULL,        -- one row per plan the allowance covers
  metric         VARCHAR NOT NULL,
  included_raw   HUGEINT NOT NULL,        -- included quantity in raw units
  scope          VARCHAR NOT NULL,        -- 'program_month' | 'org_month'
  effective_from DATE NOT NULL,           -- matched against the billing month
  effective_to   DATE,
  source         VARCHAR NOT NULL
);
