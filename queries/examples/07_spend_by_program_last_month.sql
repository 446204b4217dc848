-- Query: spend_by_program_last_month — last month's spend per program, as the month's
-- program_spend.parquet totals it (same SQL, same granularity, to the cent). cost is NULL for a
-- program with only unpriced usage; unpriced_lines says how many of its lines have no rate.
-- spend_month_program_in prices the month alone; spend_month_program filtered on billing_month gives the
-- same rows but prices every month of the history first.
-- Parameters: none.
SELECT program_id, program_name, api_version, granularity, cost, lines, unpriced_lines
FROM spend_month_program_in(timezone('UTC', date_trunc('month', timezone('UTC', now())) - INTERVAL 1 MONTH),
                            timezone('UTC', date_trunc('month', timezone('UTC', now()))))
ORDER BY cost DESC NULLS LAST, program_id;
