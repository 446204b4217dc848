-- Query: coverage_and_freshness — per source, granularity and organization: the complete span held,
-- when it was last collected, and the last status (not_eligible is expected for the API version an
-- organization's plan does not use). Parameters: none.
SELECT source, granularity, scope AS org_id,
       min(window_start) FILTER (WHERE status = 'complete') AS complete_from,
       max(window_end) FILTER (WHERE status = 'complete')   AS complete_to,
       max(collected_at)                                    AS last_collected_at,
       arg_max(status, collected_at)                        AS last_status
FROM coverage
GROUP BY ALL
ORDER BY source, granularity, org_id;
