-- Query: coverage_summary
-- Parameters: none. Per source, granularity and scope: the span of complete windows, the last
-- window with data (complete or partial), and the latest row's time, status and detail.
WITH ranked AS (
  SELECT *, row_number() OVER (
           PARTITION BY source, granularity, scope
           ORDER BY collected_at DESC, window_end DESC, window_start DESC) AS recency
  FROM coverage
)
SELECT source, granularity, scope,
       min(window_start) FILTER (WHERE status = 'complete')              AS first_complete_start,
       max(window_end)   FILTER (WHERE status = 'complete')              AS last_complete_end,
       max(window_end)   FILTER (WHERE status IN ('complete', 'partial')) AS last_data_end,
       count(*)          FILTER (WHERE status = 'complete')              AS complete_windows,
       max(collected_at)                                                 AS last_collected_at,
       max(collected_at) FILTER (WHERE status = 'complete')              AS last_complete_collected_at,
       any_value(status) FILTER (WHERE recency = 1)                      AS last_status,
       any_value(detail) FILTER (WHERE recency = 1)                      AS last_detail,
       any_value(run_id) FILTER (WHERE recency = 1)                      AS last_run_id
FROM ranked
GROUP BY source, granularity, scope
ORDER BY source, granularity, scope;
