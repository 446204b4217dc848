-- Query: spend_by_program_last_month — last month's spend per program, as the month's
-- program_spend.parquet totals it (same SQL, same granularity, to the cent). cost is NULL for a
-- program with only unpriced usage; unpriced_lines says how many of its lines have no rate.
-- Parameters: none.
SELECT program_id, program_name, api_version, granularity, cost, lines, unpriced_lines
FROM spend_month_program
WHERE billing_month = CAST(date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH AS DATE)
ORDER BY cost DESC NULLS LAST, program_id;
