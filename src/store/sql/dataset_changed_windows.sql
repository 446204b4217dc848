-- Query: dataset_changed_windows (export --dataset; run by src/store/facade/exports.ts)
-- Parameters: $dir VARCHAR (the dataset root). The windows that runs the dataset has not taken in
-- yet replaced (their coverage rows: a re-collected window's row carries the run that replaced it)
-- or that prune emptied (usage_removals). A failed or not eligible scope replaced nothing: its window
-- is not one. Reads run and coverage metadata only, never usage rows.
WITH fresh AS (
  SELECT run_id FROM collection_runs
  ANTI JOIN (SELECT run_id FROM export_runs WHERE dataset_dir = $dir) e USING (run_id)
)
SELECT DISTINCT CASE WHEN c.source = 'v2_frameworks' THEN 'usage_framework' ELSE 'usage_program' END AS stream,
       c.granularity, c.window_start, c.window_end, false AS removal
FROM coverage c SEMI JOIN fresh f ON f.run_id = c.run_id
WHERE c.status IN ('complete', 'partial')
UNION ALL
SELECT DISTINCT CASE WHEN r.table_name = 'usage_framework_buckets' THEN 'usage_framework' ELSE 'usage_program' END,
       r.granularity, r.range_start, r.range_end, true
FROM usage_removals r SEMI JOIN fresh f ON f.run_id = r.run_id;
