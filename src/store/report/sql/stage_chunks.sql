-- Query: stage_chunks (report stage; TEMP table rpt_chunks, not a report file)
-- Parameters: $programs_per_chunk BIGINT.
-- The programs of rpt_days_unsorted (stage_days.sql) numbered into chunks of consecutive (org_id NULLS FIRST, program_id), the
-- leading keys of rpt_daily's order: the detail is allocated one chunk at a time and the chunks are
-- appended in order, so the table is in line order without sorting it whole.
SELECT org_id, program_id, (dense_rank() OVER (ORDER BY org_id NULLS FIRST, program_id) - 1) // $programs_per_chunk AS chunk
FROM (SELECT DISTINCT org_id, program_id FROM rpt_days_unsorted)
