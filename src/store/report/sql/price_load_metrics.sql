-- Query: price_load_metrics
-- Parameters: $revision VARCHAR; $json VARCHAR: JSON array of {metric, api_version, display_name,
-- raw_unit, billing_unit, divisor (digits as a string), aggregation, source}.
INSERT INTO price_metrics
SELECT m.metric, m.api_version, m.display_name, m.raw_unit, m.billing_unit, CAST(m.divisor AS HUGEINT), m.aggregation, m.source, $revision
FROM (
  SELECT unnest(from_json($json::JSON,
    '[{"metric":"VARCHAR","api_version":"VARCHAR","display_name":"VARCHAR","raw_unit":"VARCHAR","billing_unit":"VARCHAR","divisor":"VARCHAR","aggregation":"VARCHAR","source":"VARCHAR"}]')) AS m
);
