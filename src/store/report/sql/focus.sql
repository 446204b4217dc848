-- Report: focus (FinOps FOCUS 1.2 cost and usage rows, before finalisation and corrections)
-- Parameters: $granularity VARCHAR, $currency VARCHAR, $revision VARCHAR (price book),
--             $provider VARCHAR, $publisher VARCHAR, $invoice_issuer VARCHAR, $service_name VARCHAR,
--             $service_category VARCHAR, $service_subcategory VARCHAR, $unknown_account VARCHAR
--             (BillingAccountId when no organization is known), $unit_from VARCHAR[], $unit_to VARCHAR[]
--             (billing unit -> FOCUS unit), $region_ids VARCHAR[], $region_names VARCHAR[] (RegionName
--             of each known region id; an unknown id is its own name), $coverage_status VARCHAR
--             ('COMPLETE' or 'PARTIAL'), $line_offset BIGINT (the lines of the chunks before this one).
-- Reads rpt_daily_chunk: one chunk of rpt_daily (src/store/report/sql/daily_chunk.sql of the same run:
-- program_spend's lines allocated to days and frameworks by largest remainder), so BilledCost sums to
-- program_spend's total per program (SubAccountId) and in total. The FOCUS rows are built one chunk
-- at a time (focus.ts) and the chunks follow each other in program order, so the lines are numbered
-- program first (organization, program, then charge period), continuing from $line_offset.
-- One Usage row per program line, day and framework (or the program's usage with no framework) with
-- a positive quantity or a cost: no negative or zero-quantity Usage rows.
-- Costs: BilledCost = EffectiveCost = the row's share of the line's rounded cost (cents);
-- ListCost = ListUnitPrice x PricingQuantity and ContractedCost = ContractedUnitPrice x PricingQuantity,
-- exact products (FOCUS requires the product), so they may differ from BilledCost below a cent.
-- PricingQuantity is the billable quantity (after the included allowance), ConsumedQuantity the usage.
-- SkuPriceId is the price book's rate id: one rate (one ListUnitPrice), so a rate change mid-month
-- gives a second SkuPriceId. BillingAccountName is the organization's name from the API's organization
-- listing (table organizations), else 'Organization <id>' when no listing named it.
-- Only priced usage: FOCUS costs must not be null and no price is invented, so usage without a rate is
-- left out here (the workbook and the Parquet reports carry it as UNPRICED; the manifest's FOCUS entry
-- counts it by plan and reason). x_Unpriced (always false) and x_UnpricedReason (always NULL) stay
-- for the rows finalised before, which kept the columns.
SELECT
  $line_offset + row_number() OVER (ORDER BY d.org_id NULLS FIRST, d.program_id, d.charge_from, d.line_type, d.framework_id NULLS FIRST,
                              d.metric, d.period_id, d.rate_id NULLS FIRST, d.program_line_no) AS line_no,
  CAST(d.cost AS DECIMAL(18,2)) AS "BilledCost",
  coalesce(d.org_id, p.org_id, $unknown_account) AS "BillingAccountId",
  CASE WHEN coalesce(d.org_id, p.org_id) IS NULL THEN 'Personal account (no organization)'
       ELSE coalesce(o.name, 'Organization ' || coalesce(d.org_id, p.org_id)) END AS "BillingAccountName",
  CAST($currency AS VARCHAR) AS "BillingCurrency",
  timezone('UTC', CAST(d.billing_month AS TIMESTAMP) + INTERVAL 1 MONTH) AS "BillingPeriodEnd",
  timezone('UTC', CAST(d.billing_month AS TIMESTAMP)) AS "BillingPeriodStart",
  'Usage' AS "ChargeCategory",
  CAST(NULL AS VARCHAR) AS "ChargeClass",
  coalesce(m.display_name, d.metric) || ' (' || coalesce(list_extract($unit_to, list_position($unit_from, d.billing_unit)), 'Units') || ')'
    || CASE d.line_type WHEN 'framework' THEN ' of framework ' || coalesce(d.framework_name, d.framework_id)
                        WHEN 'unattributed' THEN ' not attributed to a current framework'
                        ELSE '' END
    || ' on plan ' || d.period_plan
    || CASE WHEN d.priced THEN ' at ' || CAST(d.rate AS VARCHAR) || ' ' || $currency || ' per ' || d.billing_unit
            ELSE ' (UNPRICED: ' || coalesce(d.note, 'no rate in the price book') || ')' END AS "ChargeDescription",
  'Usage-Based' AS "ChargeFrequency",
  d.charge_to AS "ChargePeriodEnd",
  d.charge_from AS "ChargePeriodStart",
  CAST(d.quantity AS DECIMAL(38,6)) AS "ConsumedQuantity",
  coalesce(list_extract($unit_to, list_position($unit_from, d.billing_unit)), 'Units') AS "ConsumedUnit",
  CASE WHEN d.priced THEN CAST(CAST(d.rate AS DECIMAL(18,6)) * CAST(d.billable_quantity AS DECIMAL(38,6)) AS DECIMAL(38,12)) END AS "ContractedCost",
  CASE WHEN d.priced THEN CAST(d.rate AS DECIMAL(18,6)) END AS "ContractedUnitPrice",
  CAST(d.cost AS DECIMAL(18,2)) AS "EffectiveCost",
  CAST(NULL AS VARCHAR) AS "InvoiceId",
  CAST($invoice_issuer AS VARCHAR) AS "InvoiceIssuerName",
  CASE WHEN d.priced THEN CAST(CAST(d.rate AS DECIMAL(18,6)) * CAST(d.billable_quantity AS DECIMAL(38,6)) AS DECIMAL(38,12)) END AS "ListCost",
  CASE WHEN d.priced THEN CAST(d.rate AS DECIMAL(18,6)) END AS "ListUnitPrice",
  'Standard' AS "PricingCategory",
  CAST(d.billable_quantity AS DECIMAL(38,6)) AS "PricingQuantity",
  coalesce(list_extract($unit_to, list_position($unit_from, d.billing_unit)), 'Units') AS "PricingUnit",
  CAST($provider AS VARCHAR) AS "ProviderName",
  CAST($publisher AS VARCHAR) AS "PublisherName",
  p.region_id AS "RegionId",
  CASE WHEN p.region_id IS NOT NULL THEN coalesce(list_extract($region_names, list_position($region_ids, p.region_id)), p.region_id) END AS "RegionName",
  coalesce(d.framework_id, d.program_id) AS "ResourceId",
  CASE WHEN d.framework_id IS NOT NULL THEN coalesce(d.framework_name, d.framework_id) ELSE coalesce(d.program_name, d.program_id) END AS "ResourceName",
  CASE WHEN d.framework_id IS NOT NULL THEN 'Framework' ELSE 'Program' END AS "ResourceType",
  CAST($service_category AS VARCHAR) AS "ServiceCategory",
  CAST($service_name AS VARCHAR) AS "ServiceName",
  CAST($service_subcategory AS VARCHAR) AS "ServiceSubcategory",
  d.metric AS "SkuId",
  coalesce(m.display_name, d.metric) AS "SkuMeter",
  CASE WHEN d.priced THEN CAST(json_object('Plan', d.period_plan, 'Metric', d.metric,
                                      'BillingUnit', coalesce(list_extract($unit_to, list_position($unit_from, d.billing_unit)), 'Units')) AS VARCHAR) END AS "SkuPriceDetails",
  CASE WHEN d.priced THEN d.rate_id END AS "SkuPriceId",
  d.program_id AS "SubAccountId",
  coalesce(d.program_name, d.program_id) AS "SubAccountName",
  concat_ws('|', strftime(d.charge_from, '%Y-%m-%dT%H:%M:%SZ'), d.program_id, d.line_type, coalesce(d.framework_id, '-'),
            d.metric, d.period_id, coalesce(d.rate_id, '-')) AS "x_RowKey",
  d.line_type AS "x_LineType",
  d.metric AS "x_Metric",
  d.period_plan AS "x_Plan",
  d.period_id AS "x_PeriodId",
  CAST($granularity AS VARCHAR) AS "x_Granularity",
  CAST($coverage_status AS VARCHAR) AS "x_CoverageStatus",
  CAST($revision AS VARCHAR) AS "x_PriceBookRevision",
  d.rate_id AS "x_PriceBookRateId",
  CAST(d.quantity_raw AS DECIMAL(38,0)) AS "x_ConsumedQuantityRaw",
  CAST(d.allowance AS DECIMAL(38,6)) AS "x_IncludedQuantity",
  NOT d.priced AS "x_Unpriced",
  CASE WHEN NOT d.priced THEN d.note END AS "x_UnpricedReason",
  CAST(NULL AS VARCHAR) AS "x_CorrectsFinalization"
FROM rpt_daily_chunk d
LEFT JOIN programs p ON p.program_id = d.program_id
LEFT JOIN organizations o ON o.org_id = coalesce(d.org_id, p.org_id)
LEFT JOIN price_metrics m ON m.metric = d.metric
WHERE d.quantity_raw > 0 AND d.priced
ORDER BY line_no
