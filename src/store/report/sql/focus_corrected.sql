-- Report: focus_corrected (the FOCUS rows of a month that has been finalised)
-- Parameters: $month VARCHAR ('YYYY-MM'). Requires rpt_focus_current (src/store/report/sql/focus.sql of
-- the same run) and the finalisation tables of migration 003.
-- The finalised rows exactly as they were recorded, in order, then one ChargeClass 'Correction' row
-- per row key (charge period, program, line type, framework, metric, plan period, rate) whose
-- current amounts or quantities differ from the sum of its finalised rows: the row carries the
-- current dimensions (or the last finalised ones when the usage vanished) and the differences.
-- So the sum of BilledCost stays equal to the current workbook's total.
WITH fin AS (
  SELECT f.*, r.seq
  FROM report_focus_finalized f
  JOIN report_finalizations r ON r.finalization_id = f.finalization_id
  WHERE f.month = $month
),
latest AS (
  SELECT arg_max(finalization_id, seq) AS finalization_id FROM report_finalizations WHERE month = $month
),
base AS (
  SELECT "x_RowKey",
    sum("BilledCost") AS billed, sum("EffectiveCost") AS effective, sum("ListCost") AS list,
    sum("ContractedCost") AS contracted, sum(coalesce("PricingQuantity", 0)) AS pricing_qty,
    sum(coalesce("ConsumedQuantity", 0)) AS consumed_qty, sum(coalesce("x_ConsumedQuantityRaw", 0)) AS consumed_raw,
    sum(coalesce("x_IncludedQuantity", 0)) AS included_qty
  FROM fin GROUP BY "x_RowKey"
),
last_rows AS (
  SELECT * EXCLUDE (finalization_id, month, row_no, seq, rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY "x_RowKey" ORDER BY seq DESC, row_no DESC) AS rn FROM fin
  ) WHERE rn = 1
),
dims AS (
  SELECT * EXCLUDE (line_no) FROM rpt_focus_current
  UNION ALL BY NAME
  SELECT * FROM last_rows l WHERE NOT EXISTS (SELECT 1 FROM rpt_focus_current c WHERE c."x_RowKey" = l."x_RowKey")
),
corr AS (
  SELECT d.* REPLACE (
    'Correction' AS "ChargeClass",
    CAST(coalesce(c."BilledCost", 0) - coalesce(b.billed, 0) AS DECIMAL(18,2)) AS "BilledCost",
    CAST(coalesce(c."EffectiveCost", 0) - coalesce(b.effective, 0) AS DECIMAL(18,2)) AS "EffectiveCost",
    CAST(coalesce(c."ListCost", 0) - coalesce(b.list, 0) AS DECIMAL(38,12)) AS "ListCost",
    CAST(coalesce(c."ContractedCost", 0) - coalesce(b.contracted, 0) AS DECIMAL(38,12)) AS "ContractedCost",
    CAST(coalesce(c."PricingQuantity", 0) - coalesce(b.pricing_qty, 0) AS DECIMAL(38,6)) AS "PricingQuantity",
    CAST(coalesce(c."ConsumedQuantity", 0) - coalesce(b.consumed_qty, 0) AS DECIMAL(38,6)) AS "ConsumedQuantity",
    CAST(coalesce(c."x_ConsumedQuantityRaw", 0) - coalesce(b.consumed_raw, 0) AS DECIMAL(38,0)) AS "x_ConsumedQuantityRaw",
    CAST(coalesce(c."x_IncludedQuantity", 0) - coalesce(b.included_qty, 0) AS DECIMAL(38,6)) AS "x_IncludedQuantity",
    (SELECT finalization_id FROM latest) AS "x_CorrectsFinalization"
  )
  FROM dims d
  LEFT JOIN rpt_focus_current c ON c."x_RowKey" = d."x_RowKey"
  LEFT JOIN base b ON b."x_RowKey" = d."x_RowKey"
),
u AS (
  SELECT 0 AS part, seq, row_no, * EXCLUDE (finalization_id, month, seq, row_no) FROM fin
  UNION ALL BY NAME
  SELECT 1 AS part, NULL AS seq, NULL AS row_no, * FROM corr
  WHERE "BilledCost" <> 0 OR "ListCost" <> 0 OR "ContractedCost" <> 0 OR "PricingQuantity" <> 0
     OR "ConsumedQuantity" <> 0 OR "x_ConsumedQuantityRaw" <> 0 OR "x_IncludedQuantity" <> 0
)
SELECT row_number() OVER (ORDER BY part, seq, row_no, "ChargePeriodStart", "x_RowKey") AS line_no,
  * EXCLUDE (part, seq, row_no)
FROM u
ORDER BY line_no
