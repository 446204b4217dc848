-- Query: billing_periods_insert_staged
-- Parameters: none. Adds the batch's plan periods that billing_periods does not hold yet (inside the
-- batch's commit transaction, before usage_*_insert_staged.sql, which joins them by value).
INSERT INTO billing_periods
SELECT (SELECT coalesce(max(period_key), 0) FROM billing_periods) + row_number() OVER (ORDER BY s.period_local),
       s.period_id, s.period_plan, s.period_start, s.period_end
FROM staging_periods s
WHERE NOT EXISTS (
  SELECT 1 FROM billing_periods p
  WHERE p.period_id = s.period_id AND p.period_plan = s.period_plan AND p.period_start = s.period_start
    AND p.period_end IS NOT DISTINCT FROM s.period_end);
