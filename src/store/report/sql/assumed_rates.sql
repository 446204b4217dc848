-- Query: assumed_rates (the Summary's, the charts' and the manifest's statement of assumed rates)
-- Parameters: $rate_ids VARCHAR[] (the rates the price book marks `assumed = true`). Reads
-- rpt_program_spend of the run. Per assumed rate that priced lines of the period: its lines and
-- their cost (sums of the rounded lines, so the amount ties to program_spend).
SELECT rate_id, any_value(period_plan) AS plan, any_value(metric) AS metric, CAST(any_value(rate) AS VARCHAR) AS rate,
  CAST(count(*) AS BIGINT) AS lines, CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost
FROM rpt_program_spend
WHERE list_contains($rate_ids, rate_id)
GROUP BY rate_id
ORDER BY rate_id;
