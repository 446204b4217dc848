-- Query: copy_parquet (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), <path> (string literal, quoted by
-- quoteLiteral: COPY takes no parameter for its target). Rows in line order, zstd, so the same rows
-- give the same bytes; DuckDB writes no timestamp into the file.
COPY (SELECT * FROM {{table}} ORDER BY line_no) TO {{path}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880);
