// `usage-pipeline query "<SQL>"`: a thin read-only SQL runner over the analyst copy, so that the
// README's and the demo's queries run with what the package installs (no separate duckdb program).
// Checks the input and runs queryAnalystCopy() (src/app/query.ts), which opens the copy read-only.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../config/packageRoot.js';
import { UsageError } from '../domain/errors.js';
import { queryAnalystCopy, type QueryResult } from '../app/query.js';
import { commandContext, type CommonOptions } from '../app/context.js';

export type { QueryResult };

export interface QueryCommandOptions extends CommonOptions {
  sql?: string;
  file?: string;
  /** A shipped example by name (`compute_hours_last_month`, or its number `01`). */
  example?: string;
}

export interface ExampleQuery {
  name: string;
  file: string;
  /** The first line of its `-- Query: name — what it does` header. */
  summary: string;
}

/** The example queries the package ships (the .sql files of queries/examples/), found wherever it is installed. */
export function exampleQueries(): ExampleQuery[] {
  const dir = join(packageRoot(), 'queries', 'examples');
  return readdirSync(dir)
    .filter((f) => /^\d+_\w+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const first = readFileSync(join(dir, f), 'utf8').split('\n')[0] ?? '';
      return {
        name: f.replace(/^\d+_|\.sql$/g, ''),
        file: join(dir, f),
        summary: first.replace(/^--\s*Query:\s*\w+\s*[—-]?\s*/, ''),
      };
    });
}

function exampleFile(name: string): string {
  const bare = name.replace(/\.sql$/, '');
  const all = exampleQueries();
  const hit = all.find(
    (e) => e.name === bare || e.file.endsWith(`/${bare}.sql`) || e.file.split('/').at(-1)!.startsWith(`${bare}_`),
  );
  if (!hit)
    throw new UsageError(
      `no example query "${name}": \`usage-pipeline query --examples\` lists them (${all.map((e) => e.name).join(', ')}).`,
    );
  return hit.file;
}

/** `query --examples`: one line per example, name and what it shows, cut to 80 columns. */
export function formatExamples(all: ExampleQuery[] = exampleQueries()): string {
  const width = Math.max(...all.map((e) => e.name.length));
  const lines = all.map((e) => {
    const line = `${e.name.padEnd(width)}  ${e.summary}`;
    return line.length > 80 ? `${line.slice(0, 79)}…` : line;
  });
  return [...lines, '', 'Run one: usage-pipeline query --example NAME'].join('\n');
}

export async function queryCommand(opts: QueryCommandOptions): Promise<QueryResult> {
  const ctx = commandContext(opts);
  const given = [opts.sql, opts.file, opts.example].filter((x) => x !== undefined).length;
  if (given !== 1) {
    throw new UsageError(
      'give one query: usage-pipeline query "SELECT ...", --file F, or --example NAME (see --examples).',
    );
  }
  let sql = opts.sql ?? '';
  if (opts.example !== undefined) sql = readFileSync(exampleFile(opts.example), 'utf8');
  if (opts.file !== undefined) {
    try {
      sql = readFileSync(resolve(ctx.cwd, opts.file), 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --file ${opts.file}: ${(err as Error).message}`);
    }
  }
  if (sql.trim() === '')
    throw new UsageError('the query is empty: give a SQL statement, e.g. "SELECT count(*) FROM usage_program"');
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
  const numeric = r.columns.map(
    (c) => r.rows.length > 0 && r.rows.every((row) => ['number', 'bigint'].includes(typeof row[c]) || row[c] === null),
  );
  const widths = r.columns.map((_, i) => Math.max(...grid.map((line) => line[i]!.length)));
  const lines = grid.map((line) =>
    line
      .map((v, i) => (numeric[i] ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push(`(${r.rows.length} row${r.rows.length === 1 ? '' : 's'})`);
  return lines.join('\n');
}
