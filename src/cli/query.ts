// `usage-pipeline query "<SQL>"`: a thin read-only SQL runner over the analyst copy, so that the
// README's and the demo's queries run with what the package installs (no separate duckdb program).
// Checks the input and runs queryAnalystCopy() (src/app/query.ts), which opens the copy read-only.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { queryAnalystCopy, type QueryResult } from '../app/query.js';
import { commandContext, type CommonOptions } from '../app/context.js';

export type { QueryResult };

export interface QueryCommandOptions extends CommonOptions {
  sql?: string;
  file?: string;
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
  return queryAnalystCopy(ctx, sql);
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
