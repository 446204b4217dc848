-- Query: copy_parquet (report output)
-- Parameters: <table> (identifier, quoted by quoteIdent), <path> (string literal, quoted by
-- quoteLiteral: COPY takes no parameter for its target). Rows in line order, zstd, so the same rows
-- give the same bytes; DuckDB writes no timestamp into the file. Every report table is created in
-- line order (ORDER BY line_no) and a report runs with preserve_insertion_order on (report/run.ts),
-- so the table is read in line order without sorting it again (a sort of millions of wide rows
-- would spill to disk for nothing).
COPY (SELECT * FROM {{table}}) TO {{path}} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880);
