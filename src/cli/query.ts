// `usage-pipeline query "<SQL>"`: a thin read-only SQL runner over the analyst copy, so that the
// README's and the demo's queries run with what the package installs (no separate duckdb program).
// It opens the copy read-only: a statement that writes fails, and the collector is never blocked.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../config/load.js';
import { analystCopyPath } from '../store/publish.js';
import { openStore } from '../store/store.js';
import { commandContext, type CommonOptions } from './context.js';

export interface QueryCommandOptions extends CommonOptions {
  sql?: string;
  file?: string;
}

export interface QueryResult {
  /** The database file queried: the analyst copy. */
  db: string;
  columns: string[];
  rows: Record<string, unknown>[];
}

export async function queryCommand(opts: QueryCommandOptions): Promise<QueryResult> {
  const ctx = commandContext(opts);
  if ((opts.sql === undefined) === (opts.file === undefined)) {
    throw new UsageError('give one query: usage-pipeline query "SELECT ..." or usage-pipeline query --file queries/examples/01_compute_hours_last_month.sql');
  }
  let sql = opts.sql ?? '';
  if (opts.file !== undefined) {
    try {
      sql = readFileSync(resolve(ctx.cwd, opts.file), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --file ${opts.file}: ${(err as Error).message}`);
    }
  }
  if (sql.trim() === '') throw new UsageError('the query is empty: give a SQL statement, e.g. "SELECT count(*) FROM usage_program"');
  const db = analystCopyPath(ctx.dbPath);
  if (!existsSync(db)) {
    throw new UsageError(`no analyst copy at ${db} yet: it is published after each collection; run \`usage-pipeline collect\` (or \`npm start\` for the demo) first.`);
  }
  const store = await openStore({ path: db, readOnly: true, log: ctx.log });
  try {
    return { db, ...(await store.queryTable(sql)) };
  } finally {
    await store.close();
  }
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** A plain text table, numbers right-aligned. */
export function formatQuery(r: QueryResult): string {
  if (r.columns.length === 0) return '(no result)';
  const grid = [r.columns, ...r.rows.map((row) => r.columns.map((c) => cell(row[c])))];
  const numeric = r.columns.map((c) => r.rows.length > 0 && r.rows.every((row) => ['number', 'bigint'].includes(typeof row[c]) || row[c] === null));
  const widths = r.columns.map((_, i) => Math.max(...grid.map((line) => line[i]!.length)));
  const lines = grid.map((line) => line.map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return lines.join('\n');
}
