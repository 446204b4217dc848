-- Query: stage_framework_days (report stage; one Parquet part per chunk behind the TEMP view rpt_framework_days, not a report file)
-- Parameters: $granularity VARCHAR, $range_start TIMESTAMPTZ, $range_end TIMESTAMPTZ (exclusive),
--             $framework_metrics VARCHAR[] (the six metrics the frameworks endpoint reports),
--             $chunk BIGINT (a chunk of rpt_chunks; none matches -1),
--             $programs VARCHAR[] (the chunk's program ids).
-- Reads rpt_chunks (stage_chunks.sql).
-- The current frameworks' usage per program line key and day (macro spend_framework_days, migration
-- 009) of one chunk of programs, with its chunk. One chunk at a time: the month's aggregate at once
-- needs more than the report's memory limit at 10,000 programs. The list of the chunk's programs is a
-- plain filter on a grouping key, so DuckDB applies it before the aggregate (a join alone filters after
-- it; a range of ids is not enough: a chunk that spans two organizations spans nearly every id).
-- Usage of a program the period's spend has no day for is never billed (daily_chunk.sql joins on the
-- program's days), so it is left out.
SELECT f.*, c.chunk
FROM spend_framework_days($granularity, CAST($range_start AS TIMESTAMPTZ), CAST($range_end AS TIMESTAMPTZ), $framework_metrics) f
JOIN (SELECT DISTINCT program_id, chunk FROM rpt_chunks WHERE chunk = $chunk) c ON c.program_id = f.program_id
WHERE list_contains($programs, f.program_id)
