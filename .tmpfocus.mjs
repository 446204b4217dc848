import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';
const [db, variant, limit] = process.argv.slice(2);
const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY', memory_limit: limit, threads: process.env.TH ?? '2', allocator_flush_threshold: '16MB', allocator_background_threads: 'true', temp_directory: '/tmp/wt15n-parts/tmp' });
const c = await inst.connect();
let peak = 0; const iv = setInterval(() => { const m = /VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8')); peak = Math.max(peak, +m[1] / 1024); }, 50);
let sql = readFileSync('src/store/report/sql/focus.sql', 'utf8').trim().replace(/;\s*$/, '');
const params = { granularity: 'daily', currency: 'USD', revision: 'r', provider: 'P', publisher: 'P', invoice_issuer: 'P', service_name: 'S', service_category: 'Databases', service_subcategory: 'x', unknown_account: 'u', unit_from: ['GB'], unit_to: ['GB'], region_ids: ['a'], region_names: ['A'], coverage_status: 'COMPLETE', line_offset: 0n };
const lit = (v) => Array.isArray(v) ? `[${v.map(lit).join(',')}]::VARCHAR[]` : typeof v === 'bigint' ? `${v}::BIGINT` : `'${v}'`;
for (const [k, v] of Object.entries(params).sort((a, b) => b[0].length - a[0].length)) sql = sql.replaceAll('$' + k, lit(v));
const t = performance.now();
for (let k = 0; k < 4; k++) {
  const part = `/tmp/wt15n-parts/rpt_daily-0000${k}.parquet`;
  if (variant === 'sub') {
    const progs = (await c.runAndReadAll(`SELECT DISTINCT org_id, program_id FROM read_parquet('${part}') ORDER BY org_id NULLS FIRST, program_id`)).getRowObjectsJson();
    for (let s = 0; s < progs.length; s += 25) {
      const ids = progs.slice(s, s + 25).map((p) => p.program_id);
      await c.run(`CREATE OR REPLACE TEMP VIEW rpt_daily_chunk AS SELECT * FROM read_parquet('${part}') WHERE list_contains($ids, program_id)`.replace('$ids', `[${ids.map((i) => `'${i}'`).join(',')}]`));
      if (process.env.MODE === 'count') await c.run(`SELECT count(*), max(length(CAST(t AS VARCHAR))) FROM (${sql}) t`); else await c.run(`COPY (${sql}) TO '/tmp/wt15n-parts/out-${k}-${s}.parquet' (FORMAT parquet, COMPRESSION ${process.env.CMP ?? 'zstd'}, ROW_GROUP_SIZE ${process.env.RG ?? 30720})`);
    }
  } else {
    await c.run(`CREATE OR REPLACE TEMP VIEW rpt_daily_chunk AS SELECT * FROM read_parquet('${part}')`);
    await c.run(`COPY (${sql}) TO '/tmp/wt15n-parts/out-${k}.parquet' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 30720)`);
  }
  const m = (await c.runAndReadAll(`SELECT CAST(sum(memory_usage_bytes)/1048576 AS INT) mb FROM duckdb_memory()`)).getRowObjectsJson()[0];
  console.log(variant, limit, 'part', k, 'peak RSS so far', Math.round(peak), 'duckdb', m.mb, Math.round(performance.now() - t), 'ms');
}
clearInterval(iv);
