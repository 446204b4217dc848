-- Query: alert_anomaly_detail (an anomaly's contributions, src/alerts/evaluate.ts)
-- Parameters: $eval_from VARCHAR, $eval_to VARCHAR (YYYY-MM-DD), $baseline_days INTEGER,
-- $keys VARCHAR[] (program_id || '|' || day of the anomalies found by alert_anomaly_totals.sql).
-- The same pricing as alert_anomaly_totals.sql, per metric: the day's spend (bday = day) and each
-- baseline day's usage priced at the day's rates, read from the priced days (alert_priced_days).
WITH k AS (SELECT split_part(key, '|', 1) AS program_id, CAST(split_part(key, '|', 2) AS DATE) AS day FROM unnest($keys) t(key)),
q AS MATERIALIZED (
  SELECT program_id, usage_day, metric, CAST(sum(qty) AS HUGEINT) AS qty, max(rate_micro) AS rate_micro,
    any_value(divisor) AS divisor, CAST(sum(cents) AS HUGEINT) AS cents
  FROM alert_priced_days
  WHERE aggregation = 'sum'
    AND usage_day >= CAST($eval_from AS DATE) - $baseline_days AND usage_day < CAST($eval_to AS DATE)
    AND program_id IN (SELECT program_id FROM k)
  GROUP BY program_id, usage_day, metric
)
SELECT k.program_id, CAST(k.day AS VARCHAR) AS day, CAST(b.usage_day AS VARCHAR) AS bday, b.metric,
  CAST(CASE WHEN b.usage_day = k.day THEN b.cents
       ELSE spend_cents(b.qty, coalesce(e.rate_micro, b.rate_micro), coalesce(e.divisor, b.divisor)) END AS BIGINT) AS cents
FROM k
JOIN q b ON b.program_id = k.program_id AND b.usage_day <= k.day AND b.usage_day >= k.day - $baseline_days
LEFT JOIN q e ON e.program_id = k.program_id AND e.usage_day = k.day AND e.metric = b.metric
ORDER BY k.program_id, k.day, b.usage_day, b.metric;
