-- Query: price_load_rates
-- Parameters: $revision VARCHAR; $json VARCHAR: JSON array of {rate_id, plan, metric, rate (decimal
-- string), rate_micro (digits), effective_from (YYYY-MM-DD), effective_to (YYYY-MM-DD or null),
-- unit, source}.
INSERT INTO price_rates
SELECT r.rate_id, r.plan, r.metric, CAST(r.rate AS DECIMAL(18,6)), CAST(r.rate_micro AS HUGEINT),
       CAST(r.effective_from || ' 00:00:00+00' AS TIMESTAMPTZ),
       CAST(r.effective_to || ' 00:00:00+00' AS TIMESTAMPTZ),
       r.unit, r.source, $revision
FROM (
  SELECT unnest(from_json($json::JSON,
    '[{"rate_id":"VARCHAR","plan":"VARCHAR","metric":"VARCHAR","rate":"VARCHAR","rate_micro":"VARCHAR","effective_from":"VARCHAR","effective_to":"VARCHAR","unit":"VARCHAR","source":"VARCHAR"}]')) AS r
);
