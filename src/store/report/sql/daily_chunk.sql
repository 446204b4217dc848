-- Query: daily_chunk (report input for snapshot_storage, transfer, framework_spend, FOCUS, the charts
-- and the forecast; not a report file)
-- Parameters: $chunk BIGINT (a chunk of rpt_chunks; none matches -1), $framework_metrics VARCHAR[].
-- Reads rpt_days, rpt_program_spend, rpt_framework_days and rpt_chunks of the same run (the first two
-- sorted by chunk, so the chunk's filter reads only its row groups). The rows are
-- the table macro spend_day_split (queries/schema/009_report_stages.sql), the stage the analysts'
-- spend_daily view reads too: each program_spend line's rounded cost allocated to its days and
-- frameworks by largest remainder, so the rows of a line add up to it exactly. Every window of the
-- split is per day or program line, so one chunk of programs at a time gives the same rows.
WITH rpt_chunk_days AS (
  SELECT d.* EXCLUDE (chunk) FROM rpt_days d WHERE d.chunk = $chunk
),
rpt_chunk_lines AS (
  SELECT l.* FROM rpt_program_spend l
  SEMI JOIN rpt_chunks c ON c.org_id IS NOT DISTINCT FROM l.org_id AND c.program_id = l.program_id AND c.chunk = $chunk
),
rpt_chunk_framework_days AS (
  SELECT f.* EXCLUDE (chunk) FROM rpt_framework_days f WHERE f.chunk = $chunk
)
SELECT * FROM spend_day_split('rpt_chunk_days', 'rpt_chunk_lines', 'rpt_chunk_framework_days', $framework_metrics)
ORDER BY org_id NULLS FIRST, program_id, usage_day, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id
