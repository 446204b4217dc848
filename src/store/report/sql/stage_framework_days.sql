-- Query: stage_framework_days (report stage; TEMP table rpt_framework_days, not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports).
-- Reads rpt_chunks (stage_chunks.sql).
-- The current frameworks' usage per program line key and day (macro spend_framework_days, migration
-- 009), once per run, with the chunk of its program and sorted by chunk, so each chunk of programs
-- reads only its row groups instead of the frameworks' buckets. Usage of a program the period's
-- spend has no day for is never billed (daily_chunk.sql joins on the program's days), so it is left out.
SELECT f.*, c.chunk
FROM spend_framework_days($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics) f
JOIN (SELECT DISTINCT program_id, chunk FROM rpt_chunks) c ON c.program_id = f.program_id
ORDER BY c.chunk
