-- Query: stage_days_by_chunk (report stage; one Parquet part per chunk behind the TEMP view rpt_days, not a report file)
-- Parameters: $chunk BIGINT (a chunk of rpt_chunks; none matches -1); reads rpt_days_unsorted
-- (stage_days.sql) and rpt_chunks (stage_chunks.sql).
-- The rows of spend_program_days of one chunk of programs, with their chunk: one part per chunk, in
-- chunk order, so a chunk's query (daily_chunk.sql) reads only its own part's row groups. One chunk
-- at a time: sorting the month's rows by chunk in one query ran out of a 256MB limit.
SELECT d.*, c.chunk
FROM rpt_days_unsorted d
JOIN rpt_chunks c ON c.org_id IS NOT DISTINCT FROM d.org_id AND c.program_id = d.program_id
WHERE c.chunk = $chunk
