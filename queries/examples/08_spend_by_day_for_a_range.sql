-- Query: spend_by_day_for_a_range — spend per UTC day for a date range, from the priced daily lines
-- (each month line's rounded cost shared out over its days, so the days add up to the month to the
-- cent). spend_daily_between prices only the months the range falls in, each at its report's
-- granularity; a month of a 10,000-program account splits into about 7 M daily rows, a few minutes'
-- work, and `export --dataset` keeps the same rows already priced in
-- DIR/spend_daily/month=YYYY-MM/part-0.parquet.
-- Parameters: edit from_day (inclusive) and to_day (exclusive) below; the default is the first
-- fortnight of last month.
SELECT usage_day,
       sum(cost) AS cost,
       count(*) FILTER (WHERE unpriced_reason IS NOT NULL) AS unpriced_lines
FROM spend_daily_between(
  CAST(date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH AS DATE),                   -- from_day
  CAST(date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH + INTERVAL 14 DAY AS DATE)) -- to_day
GROUP BY usage_day
ORDER BY usage_day;
