// The report's tables, computed in stages so that memory stays bounded at any number of programs
// (ARCHITECTURE.md, "Reports"): spend_program_days once (rpt_days: its allowance windows run over
// whole pools), program_spend from it, the frameworks' usage once, then the detail (rpt_daily) one
// chunk of programs at a time (every window of the split is per day or per line), appended in line
// order; the other reports read rpt_daily. Each stage is a macro of migration 009 that the analysts'
// spend views chain too, so the report and the views share one SQL.
import { V2_FRAMEWORK_METRICS } from '../contract/api.js';
import { silentLogger, type Logger } from '../log.js';
import type { Store } from '../store/store.js';
import { quoteIdent, readSql } from '../store/sql.js';
import { REPORTS, reportTable } from './definitions.js';

/** The TEMP table of each line's cost spread over its days and frameworks (daily_chunk.sql). */
export const DAILY_TABLE = 'rpt_daily';
const DAYS_TABLE = 'rpt_days';
const FRAMEWORK_DAYS_TABLE = 'rpt_framework_days';
const CHUNKS_TABLE = 'rpt_chunks';
/**
 * Programs whose detail is allocated in one statement: at 10,000 programs and 100,000 frameworks a
 * chunk of 1,000 (about 1.4 million detail rows) ran out of a 320 MB limit in its windows.
 */
export const PROGRAMS_PER_CHUNK = 250;
/** No chunk has this number: the statement that creates rpt_daily empty, with the chunks' columns. */
const NO_CHUNK = -1n;

// The unordered stages (read by joins, never copied to a file) may be built in any order, which lets
// DuckDB stream and spill them; the report tables and rpt_daily are built with insertion order kept.
const UNORDERED = 'SET preserve_insertion_order = false';
const ORDERED = 'SET preserve_insertion_order = true';
const CHUNK_COUNT = `SELECT coalesce(max(chunk) + 1, 0) AS n FROM ${CHUNKS_TABLE}`;
const INSERT_INTO = (table: string, query: string) => `INSERT INTO ${quoteIdent(table)} ${query}`;

export interface StageParams {
  granularity: string;
  range_start: Date;
  range_end: Date;
}

/** Runs a query once into a TEMP table (materialise.sql) that every writer then reads. */
async function materialise(store: Store, table: string, sqlPath: string, params?: Record<string, unknown>, log: Logger = silentLogger): Promise<void> {
  const t0 = performance.now();
  const sql = readSql('src/report/sql/materialise.sql')
    .replace('{{table}}', quoteIdent(table))
    .replace('{{report}}', () => readSql(sqlPath).trim().replace(/;\s*$/, ''));
  await store.run(sql, params as never);
  log.debug('report stage', { table, ms: Math.round(performance.now() - t0) });
}

/** Computes rpt_days, the report tables and rpt_daily for the period; the intermediate stages are dropped. */
export async function materialiseReports(store: Store, params: StageParams, log: Logger = silentLogger): Promise<void> {
  const frameworkMetrics = [...V2_FRAMEWORK_METRICS];
  await store.run(UNORDERED);
  await materialise(store, DAYS_TABLE, 'src/report/sql/stage_days.sql', { ...params }, log);
  await materialise(store, FRAMEWORK_DAYS_TABLE, 'src/report/sql/stage_framework_days.sql', { ...params, framework_metrics: frameworkMetrics }, log);
  await materialise(store, CHUNKS_TABLE, 'src/report/sql/stage_chunks.sql', { programs_per_chunk: BigInt(PROGRAMS_PER_CHUNK) }, log);
  await store.run(ORDERED);
  for (const def of REPORTS.filter((d) => d.basis === 'days')) await materialise(store, reportTable(def.name), def.sqlPath, undefined, log);

  const chunk = readSql('src/report/sql/daily_chunk.sql').trim().replace(/;\s*$/, '');
  await materialise(store, DAILY_TABLE, 'src/report/sql/daily_chunk.sql', { chunk: NO_CHUNK, framework_metrics: frameworkMetrics });
  const [{ n } = { n: 0n }] = await store.query<{ n: bigint | number }>(CHUNK_COUNT);
  for (let i = 0n; i < BigInt(n); i++) {
    const t0 = performance.now();
    await store.run(INSERT_INTO(DAILY_TABLE, chunk), { chunk: i, framework_metrics: frameworkMetrics });
    log.debug('report stage', { table: DAILY_TABLE, chunk: Number(i), ms: Math.round(performance.now() - t0) });
  }
  for (const t of [FRAMEWORK_DAYS_TABLE, CHUNKS_TABLE, DAYS_TABLE]) await store.run(`DROP TABLE ${quoteIdent(t)}`);

  for (const def of REPORTS.filter((d) => d.basis === 'detail')) await materialise(store, reportTable(def.name), def.sqlPath, undefined, log);
}
