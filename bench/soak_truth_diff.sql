-- The soak's database against the truth file (bench/soakCheck.ts writes it: one tab-separated line per
-- expected non-zero value, with the index of the coverage window that wrote it). Of the truth, the latest
-- window's value of each key counts; a key stored twice is a difference too. Parameters: $path.
WITH truth AS (
  -- An empty field reads as NULL; the stored side says '' for no organisation and no framework.
  SELECT source, granularity, coalesce(org_id, '') AS org_id, program_id, coalesce(framework_id, '') AS framework_id,
         period_id, ts, metric, value
  FROM read_csv($path, delim = '\t', header = false, quote = '', escape = '', columns = {
    'seq': 'BIGINT', 'source': 'VARCHAR', 'granularity': 'VARCHAR', 'org_id': 'VARCHAR', 'program_id': 'VARCHAR',
    'framework_id': 'VARCHAR', 'period_id': 'VARCHAR', 'ts': 'BIGINT', 'metric': 'VARCHAR', 'value': 'HUGEINT'})
  QUALIFY row_number() OVER (PARTITION BY source, granularity, org_id, program_id, framework_id, period_id, ts, metric
                             ORDER BY seq DESC) = 1
),
rows AS (
  SELECT CASE api_version WHEN 'v1' THEN 'v1_programs' ELSE 'v2_programs' END AS source, granularity,
         coalesce(org_id, '') AS org_id, program_id, '' AS framework_id, period_id, epoch_ms(timeframe_start) AS ts,
         metric, CAST(value AS HUGEINT) AS value
  FROM usage_program WHERE value <> 0
  UNION ALL
  SELECT 'v2_frameworks', granularity, coalesce(org_id, ''), program_id, framework_id, period_id,
         epoch_ms(timeframe_start), metric, CAST(value AS HUGEINT)
  FROM usage_framework WHERE value <> 0
),
stored AS (
  SELECT source, granularity, org_id, program_id, framework_id, period_id, ts, metric,
         any_value(value) AS value, count(*) AS n
  FROM rows GROUP BY ALL
),
diff AS (
  SELECT concat_ws('|', source, granularity, org_id, program_id, framework_id, period_id, ts, metric) AS k,
         t.value AS truth, s.value AS stored, coalesce(s.n, 0) AS n
  FROM truth t FULL JOIN stored s USING (source, granularity, org_id, program_id, framework_id, period_id, ts, metric)
  WHERE t.value IS DISTINCT FROM s.value OR s.n > 1
)
SELECT (SELECT count(*) FROM truth) AS compared, (SELECT count(*) FROM diff) AS mismatches,
       (SELECT list(CASE WHEN n > 1 THEN 'duplicate ' || k || ' (' || n || ' rows)'
                         WHEN stored IS NULL THEN 'missing ' || k || ' (truth ' || truth || ')'
                         WHEN truth IS NULL THEN 'extra ' || k || ' = ' || stored
                         ELSE 'differs ' || k || ': stored ' || stored || ', truth ' || truth END ORDER BY k)
        FROM (SELECT * FROM diff ORDER BY k LIMIT 10)) AS examples;
