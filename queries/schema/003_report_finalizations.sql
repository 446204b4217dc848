-- Migration 003: finalised FOCUS exports.
-- Parameters: none. `report --finalize` records a month's FOCUS rows here exactly as exported, so
-- that a later export of that month writes these rows unchanged and adds ChargeClass 'Correction'
-- rows for any difference (FOCUS 1.2), instead of silently rewriting an invoiced month.
-- Written by src/report/focus.ts through src/report/sql/focus_*.sql.

-- One row per finalisation of a month: the first records the original rows, a later one (after
-- corrections were exported) records the corrections it accepted.
CREATE TABLE report_finalizations (
  finalization_id     VARCHAR     PRIMARY KEY,   -- 'YYYY-MM#<seq>'
  month               VARCHAR     NOT NULL,      -- 'YYYY-MM'
  seq                 INTEGER     NOT NULL,      -- 1, 2, ... per month
  finalized_at        TIMESTAMPTZ NOT NULL,
  price_book_revision VARCHAR     NOT NULL,
  n_rows              BIGINT      NOT NULL,      -- rows recorded by this finalisation
  billed_total        DECIMAL(18,2) NOT NULL,    -- sum of BilledCost of every finalised row of the month so far
  rows_sha256         VARCHAR     NOT NULL,      -- sha256 of the recorded rows (focus_rows_digest.sql)
  UNIQUE (month, seq)
);

-- The finalised FOCUS rows, column for column as written to focus-YYYY-MM.parquet.
CREATE TABLE report_focus_finalized (
  finalization_id     VARCHAR     NOT NULL,
  month               VARCHAR     NOT NULL,
  row_no              BIGINT      NOT NULL,      -- order within the finalisation
  "BilledCost"          DECIMAL(18,2) NOT NULL,
  "BillingAccountId"    VARCHAR NOT NULL,
  "BillingAccountName"  VARCHAR,
  "BillingCurrency"     VARCHAR NOT NULL,
  "BillingPeriodEnd"    TIMESTAMPTZ NOT NULL,
  "BillingPeriodStart"  TIMESTAMPTZ NOT NULL,
  "ChargeCategory"      VARCHAR NOT NULL,
  "ChargeClass"         VARCHAR,
  "ChargeDescription"   VARCHAR,
  "ChargeFrequency"     VARCHAR,
  "ChargePeriodEnd"     TIMESTAMPTZ NOT NULL,
  "ChargePeriodStart"   TIMESTAMPTZ NOT NULL,
  "ConsumedQuantity"    DECIMAL(38,6),
  "ConsumedUnit"        VARCHAR,
  "ContractedCost"      DECIMAL(38,12) NOT NULL,
  "ContractedUnitPrice" DECIMAL(18,6),
  "EffectiveCost"       DECIMAL(18,2) NOT NULL,
  "InvoiceIssuerName"   VARCHAR NOT NULL,
  "ListCost"            DECIMAL(38,12) NOT NULL,
  "ListUnitPrice"       DECIMAL(18,6),
  "PricingQuantity"     DECIMAL(38,6),
  "PricingUnit"         VARCHAR,
  "ProviderName"        VARCHAR NOT NULL,
  "PublisherName"       VARCHAR NOT NULL,
  "ResourceId"          VARCHAR,
  "ResourceName"        VARCHAR,
  "ResourceType"        VARCHAR,
  "ServiceCategory"     VARCHAR NOT NULL,
  "ServiceName"         VARCHAR NOT NULL,
  "SkuId"               VARCHAR,
  "SkuPriceId"          VARCHAR,
  "SubAccountId"        VARCHAR,
  "SubAccountName"      VARCHAR,
  "x_RowKey"            VARCHAR NOT NULL,
  "x_LineType"          VARCHAR NOT NULL,
  "x_Metric"            VARCHAR NOT NULL,
  "x_Plan"              VARCHAR,
  "x_PeriodId"          VARCHAR,
  "x_Granularity"       VARCHAR NOT NULL,
  "x_PriceBookRevision" VARCHAR NOT NULL,
  "x_PriceBookRateId"   VARCHAR,
  "x_ConsumedQuantityRaw" DECIMAL(38,0),
  "x_IncludedQuantity"  DECIMAL(38,6),
  "x_Unpriced"          BOOLEAN NOT NULL,
  "x_UnpricedReason"    VARCHAR,
  "x_CorrectsFinalization" VARCHAR,
  PRIMARY KEY (finalization_id, row_no)
);

COMMENT ON TABLE report_finalizations IS 'Months whose FOCUS export was finalised (report --finalize): later exports keep the finalised rows and add ChargeClass Correction rows.';
COMMENT ON TABLE report_focus_finalized IS 'The finalised FOCUS 1.2 rows of each month, column for column as exported.';
