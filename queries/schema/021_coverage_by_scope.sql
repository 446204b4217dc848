-- Migration 021: coverage summarised per scope, kept with the rows. Every hourly collect adds about three
-- coverage rows per organization (each sliding window is a new key), and `status`, the metrics after each
-- run and the planner summarised all of them (a window function over the whole table: 31 ms at 1,000
-- rows, 159 ms at 80,000; a year of hourly runs is ~26,000 per organization).
-- 1. coverage_scope_summary(source, granularity, scope): the summary recomputed from the coverage rows,
--    for the scopes matching its arguments (NULL: any), as Coverage.summary() computed it over the whole
--    table until now (the query coverage_summary). A window's failure written at the same instant as its
--    data row counts as the later one, the order they are written in (a data row's write removes the
--    window's failures); that tie was left to chance before. A macro of the schema because the table below is only right under the rule it was filled by: changing the rule
--    means a migration that replaces the macro and fills the table again.
-- 2. coverage_by_scope, one row per (source, granularity, scope), changed in the same transaction as
--    every coverage write (store/coverageSql.ts, store/facade/usage.ts), the way usage_row_counts is
--    (migration 020). Not named coverage_summary: that was the query's name, and the macro above, what
--    the table must always equal, is that query.
-- Parameters: none.
CREATE MACRO coverage_scope_summary(only_source, only_granularity, only_scope) AS TABLE
WITH ranked AS (
  SELECT *, row_number() OVER (
           PARTITION BY source, granularity, scope
           ORDER BY collected_at DESC, window_end DESC, window_start DESC,
                    status IN ('failed', 'not_eligible') DESC) AS recency
  FROM coverage
  WHERE (only_source IS NULL OR source = only_source)
    AND (only_granularity IS NULL OR granularity = only_granularity)
    AND (only_scope IS NULL OR scope = only_scope)
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
GROUP BY source, granularity, scope;

CREATE TABLE coverage_by_scope (
  source                     VARCHAR     NOT NULL,
  granularity                VARCHAR     NOT NULL,
  scope                      VARCHAR     NOT NULL,
  first_complete_start       TIMESTAMPTZ,
  last_complete_end          TIMESTAMPTZ,
  last_data_end              TIMESTAMPTZ,
  complete_windows           BIGINT      NOT NULL,
  last_collected_at          TIMESTAMPTZ NOT NULL,
  last_complete_collected_at TIMESTAMPTZ,
  last_status                VARCHAR     NOT NULL,
  last_detail                VARCHAR,
  last_run_id                VARCHAR     NOT NULL
);
INSERT INTO coverage_by_scope SELECT * FROM coverage_scope_summary(NULL, NULL, NULL);

COMMENT ON TABLE coverage_by_scope IS 'Coverage per source, granularity and scope (what status, the metrics and the planner read), changed in the same transaction as the coverage rows.';
COMMENT ON COLUMN coverage_by_scope.source IS 'coverage.source';
COMMENT ON COLUMN coverage_by_scope.granularity IS 'hourly, daily or monthly';
COMMENT ON COLUMN coverage_by_scope.scope IS 'coverage.scope: an org id, all, or a frameworks batch';
COMMENT ON COLUMN coverage_by_scope.first_complete_start IS 'earliest start of a complete window, UTC; NULL when none is complete';
COMMENT ON COLUMN coverage_by_scope.last_complete_end IS 'latest end (exclusive) of a complete window, UTC';
COMMENT ON COLUMN coverage_by_scope.last_data_end IS 'latest end (exclusive) of a complete or partial window, UTC';
COMMENT ON COLUMN coverage_by_scope.complete_windows IS 'complete coverage rows';
COMMENT ON COLUMN coverage_by_scope.last_collected_at IS 'when the latest row was written, UTC';
COMMENT ON COLUMN coverage_by_scope.last_complete_collected_at IS 'when the latest complete row was written, UTC';
COMMENT ON COLUMN coverage_by_scope.last_status IS 'status of the latest row (by collected_at, then window end and start)';
COMMENT ON COLUMN coverage_by_scope.last_detail IS 'detail of the latest row: a failure or why not eligible';
COMMENT ON COLUMN coverage_by_scope.last_run_id IS 'run of the latest row';
