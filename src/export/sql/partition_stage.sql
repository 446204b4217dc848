-- Query: partition_stage (export --dataset)
-- Parameters: those of <rows> (the text of one src/export/sql/rows_*.sql file). Materialises one
-- partition so that its Parquet and Arrow files hold the same rows.
CREATE OR REPLACE TEMP TABLE export_partition AS
{{rows}}
