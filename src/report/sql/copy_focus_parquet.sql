-- Query: copy_focus_parquet (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), <path> (string literal, quoted by
-- quoteLiteral). The FOCUS file holds the FOCUS and x_ columns only (line_no orders the rows but is
-- not a FOCUS column); zstd; timestamps are written as Parquet TIMESTAMP (isAdjustedToUTC, micros).
-- The table is created in line order and read in insertion order (see copy_parquet.sql).
COPY (SELECT * EXCLUDE (line_no) FROM {{table}}) TO {{path}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880);
