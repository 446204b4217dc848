-- Query: price_load_allowances
-- Parameters: $json VARCHAR: JSON array of {allowance_id, plan, metric, included_raw (digits),
-- scope, effective_from (YYYY-MM-DD), effective_to (YYYY-MM-DD or null), source}, one per plan; $revision VARCHAR.
INSERT INTO price_allowances
SELECT a.allowance_id, a.plan, a.metric, CAST(a.included_raw AS HUGEINT), a.scope,
       CAST(a.effective_from AS DATE), CAST(a.effective_to AS DATE), a.source, $revision
FROM (
  SELECT unnest(from_json($json::JSON,
    '[{"allowance_id":"VARCHAR","plan":"VARCHAR","metric":"VARCHAR","included_raw":"VARCHAR","scope":"VARCHAR","effective_from":"VARCHAR","effective_to":"VARCHAR","source":"VARCHAR"}]')) AS a
);
