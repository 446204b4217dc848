-- Migration 002: wide views for analysts, and table and column comments that the schema reference
-- (docs/SCHEMA.md) is generated from.
-- Parameters: none.

-- One row per bucket and period, one column per metric (NULL = no usage reported). The long tables
-- stay the source of truth; these are conveniences for spreadsheets and BI tools.
CREATE VIEW usage_program_wide AS
SELECT api_version, granularity, org_id, program_id, period_id, period_plan, timeframe_start, timeframe_end,
       sum(value) FILTER (WHERE metric = 'compute_unit_seconds')           AS compute_unit_seconds,
       sum(value) FILTER (WHERE metric = 'root_branch_bytes_month')        AS root_branch_bytes_month,
       sum(value) FILTER (WHERE metric = 'child_branch_bytes_month')       AS child_branch_bytes_month,
       sum(value) FILTER (WHERE metric = 'instant_restore_bytes_month')    AS instant_restore_bytes_month,
       sum(value) FILTER (WHERE metric = 'public_network_transfer_bytes')  AS public_network_transfer_bytes,
       sum(value) FILTER (WHERE metric = 'private_network_transfer_bytes') AS private_network_transfer_bytes,
       sum(value) FILTER (WHERE metric = 'extra_branches_month')           AS extra_branches_month,
       sum(value) FILTER (WHERE metric = 'snapshot_storage_bytes_month')   AS snapshot_storage_bytes_month,
       sum(value) FILTER (WHERE metric = 'active_time_seconds')            AS active_time_seconds,
       sum(value) FILTER (WHERE metric = 'compute_time_seconds')           AS compute_time_seconds,
       sum(value) FILTER (WHERE metric = 'written_data_bytes')             AS written_data_bytes,
       sum(value) FILTER (WHERE metric = 'synthetic_storage_size_bytes')   AS synthetic_storage_size_bytes,
       sum(value) FILTER (WHERE metric = 'data_storage_bytes_hour')        AS data_storage_bytes_hour,
       sum(value) FILTER (WHERE metric = 'logical_size_bytes')             AS logical_size_bytes,
       sum(value) FILTER (WHERE metric = 'logical_size_bytes_hour')        AS logical_size_bytes_hour
FROM usage_program
GROUP BY ALL;

CREATE VIEW usage_framework_wide AS
SELECT granularity, org_id, program_id, framework_id, period_id, period_plan, timeframe_start, timeframe_end,
       sum(value) FILTER (WHERE metric = 'compute_unit_seconds')           AS compute_unit_seconds,
       sum(value) FILTER (WHERE metric = 'root_branch_bytes_month')        AS root_branch_bytes_month,
       sum(value) FILTER (WHERE metric = 'child_branch_bytes_month')       AS child_branch_bytes_month,
       sum(value) FILTER (WHERE metric = 'instant_restore_bytes_month')    AS instant_restore_bytes_month,
       sum(value) FILTER (WHERE metric = 'public_network_transfer_bytes')  AS public_network_transfer_bytes,
       sum(value) FILTER (WHERE metric = 'private_network_transfer_bytes') AS private_network_transfer_bytes
FROM usage_framework
GROUP BY ALL;

CREATE VIEW usage_program_hourly AS SELECT * FROM usage_program_wide WHERE granularity = 'hourly';
CREATE VIEW usage_program_daily AS SELECT * FROM usage_program_wide WHERE granularity = 'daily';
CREATE VIEW usage_program_monthly AS SELECT * FROM usage_program_wide WHERE granularity = 'monthly';
CREATE VIEW usage_framework_hourly AS SELECT * FROM usage_framework_wide WHERE granularity = 'hourly';
CREATE VIEW usage_framework_daily AS SELECT * FROM usage_framework_wide WHERE granularity = 'daily';
CREATE VIEW usage_framework_monthly AS SELECT * FROM usage_framework_wide WHERE granularity = 'monthly';

COMMENT ON TABLE usage_program IS 'Program consumption, long: one row per non-zero metric value per bucket and plan period, exactly as the API reported it (v1 legacy and v2).';
COMMENT ON TABLE usage_framework IS 'Framework consumption (v2), long: one row per non-zero metric value per framework, bucket and plan period.';
COMMENT ON TABLE programs IS 'Programs seen by the inventory; deleted_at is set once a listing no longer returns one (it is still billed for the time it existed).';
COMMENT ON TABLE frameworks IS 'Frameworks seen by the inventory, deleted ones kept with deleted_at.';
COMMENT ON TABLE snapshots IS 'Snapshots seen by the inventory (manual and scheduled).';
COMMENT ON TABLE collection_runs IS 'One row per collect run: status, requests, retries, 429s received, pages, rows loaded.';
COMMENT ON TABLE coverage IS 'What was collected: one row per source, granularity, organization and window; status complete, partial, not_eligible or failed.';
COMMENT ON VIEW usage_program_wide IS 'usage_program pivoted: one column per metric (NULL = none reported).';
COMMENT ON VIEW usage_framework_wide IS 'usage_framework pivoted: one column per metric (NULL = none reported).';

COMMENT ON COLUMN usage_program.api_version IS 'v1 (legacy endpoint) or v2';
COMMENT ON COLUMN usage_program.granularity IS 'hourly, daily or monthly';
COMMENT ON COLUMN usage_program.org_id IS 'organization the program was collected under';
COMMENT ON COLUMN usage_program.period_id IS 'plan period; a bucket straddling a plan change appears once per period';
COMMENT ON COLUMN usage_program.period_plan IS 'plan of the period, which the price book prices by';
COMMENT ON COLUMN usage_program.period_end IS 'NULL for the current period';
COMMENT ON COLUMN usage_program.timeframe_start IS 'bucket start, UTC; half-open [timeframe_start, timeframe_end)';
COMMENT ON COLUMN usage_program.metric IS 'API metric name, e.g. compute_unit_seconds; units in config/prices.toml [metrics]';
COMMENT ON COLUMN usage_program.value IS 'exact int64 as reported (raw unit: seconds, bytes, byte-months, ...)';
COMMENT ON COLUMN usage_program.run_id IS 'collection_runs.run_id of the run that last wrote the row';
COMMENT ON COLUMN usage_framework.framework_id IS 'framework id (br-...)';
COMMENT ON COLUMN usage_framework.value IS 'exact int64 as reported';
COMMENT ON COLUMN coverage.scope IS 'organization id';
COMMENT ON COLUMN coverage.window_end IS 'exclusive';
