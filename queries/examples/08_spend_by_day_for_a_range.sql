-- Query: spend_by_day_for_a_range — spend per UTC day for a date range, from the priced daily lines
-- (each month line's rounded cost shared out over its days, so the days add up to the month to the
-- cent). Parameters: edit from_day (inclusive) and to_day (exclusive) below; the default is the
-- first fortnight of last month.
WITH range AS (
  SELECT CAST(date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH AS DATE) AS from_day,
         CAST(date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH + INTERVAL 14 DAY AS DATE) AS to_day
)
SELECT d.usage_day,
       sum(d.cost) AS cost,
       count(*) FILTER (WHERE d.unpriced_reason IS NOT NULL) AS unpriced_lines
FROM spend_daily d, range r
WHERE d.usage_day >= r.from_day AND d.usage_day < r.to_day
GROUP BY d.usage_day
ORDER BY d.usage_day;
