-- Query: copy_focus_parquet (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), <path> (string literal, quoted by
-- quoteLiteral). The FOCUS file holds the FOCUS and x_ columns only (line_no orders the rows but is
-- not a FOCUS column); zstd; timestamps are written as Parquet TIMESTAMP (isAdjustedToUTC, micros).
-- The table is created in line order and read in insertion order (see copy_parquet.sql).
-- Row groups of 30,720 rows (a quarter of DuckDB's default): the writer holds a whole row group
-- before it compresses it, and a FOCUS row is wide (about 1.5 KB in memory), so 122,880 rows took
-- about 180 MB, more than the report's memory limit leaves; a file of fewer rows is unchanged.
COPY (SELECT * EXCLUDE (line_no) FROM {{table}}) TO {{path}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 30720);
