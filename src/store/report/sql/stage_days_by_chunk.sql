-- Query: stage_days_by_chunk (report stage; Parquet files behind the TEMP view rpt_days, not a report file)
-- Parameters: none; reads rpt_days_unsorted (stage_days.sql) and rpt_chunks (stage_chunks.sql).
-- The rows of spend_program_days with their chunk, sorted by chunk, so that the Parquet file's row
-- groups hold one chunk's programs and a chunk's query (daily_chunk.sql) reads only its own.
SELECT d.*, c.chunk
FROM rpt_days_unsorted d
JOIN rpt_chunks c ON c.org_id IS NOT DISTINCT FROM d.org_id AND c.program_id = d.program_id
ORDER BY c.chunk
