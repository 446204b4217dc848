-- Query: plan_changes — programs whose plan changed within a month, with each plan period, from the
-- monthly buckets (a bucket that straddles a change appears once per period). Parameters: none.
SELECT program_id,
       timeframe_start AS month,
       list(DISTINCT period_plan ORDER BY period_plan) AS plans,
       count(DISTINCT period_id) AS periods
FROM usage_program
WHERE granularity = 'monthly'
GROUP BY program_id, timeframe_start
HAVING count(DISTINCT period_id) > 1
ORDER BY month DESC, program_id;
