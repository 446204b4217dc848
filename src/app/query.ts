// queryAnalystCopy(): one ad-hoc statement on the analyst copy, for the `query` command. The copy is
// opened read-only: a statement that writes fails, and the collector (which holds the database) is
// never blocked.
import { existsSync } from 'node:fs';
import { UsageError } from '../domain/errors.js';
import { analystCopyPath } from '../store/publish.js';
import { openStore } from '../store/store.js';
import type { CommandContext } from './context.js';
import { rawSql } from '../store/rawSql.js';

export interface QueryResult {
  /** The database file queried: the analyst copy. */
  db: string;
  columns: string[];
  /** Row objects; a DATE is its calendar day ('2026-10-01'), not the instant of its UTC midnight. */
  rows: Record<string, unknown>[];
}

/** The rows with each DATE column's values as 'YYYY-MM-DD' (the result converter gives a Date at UTC midnight). */
function datesAsDays(columns: string[], types: string[], rows: Record<string, unknown>[]): Record<string, unknown>[] {
  const dates = columns.filter((_, i) => types[i] === 'DATE');
  if (dates.length === 0) return rows;
  for (const row of rows)
    for (const c of dates) {
      const v = row[c];
      if (v instanceof Date) row[c] = v.toISOString().replace(/T.*$/, '');
    }
  return rows;
}

export async function queryAnalystCopy(ctx: CommandContext, sql: string): Promise<QueryResult> {
  const db = analystCopyPath(ctx.dbPath);
  if (!existsSync(db)) {
    throw new UsageError(
      `no analyst copy at ${db} yet: it is published after each collection; run \`usage-pipeline collect\` (or \`npm start\` for the demo) first.`,
    );
  }
  const store = await openStore({ path: db, readOnly: true, memoryLimit: ctx.config.store.memory_limit, log: ctx.log });
  try {
    const { columns, types, rows } = await rawSql(store).queryTable(sql);
    return { db, columns, rows: datesAsDays(columns, types, rows) };
  } finally {
    await store.close();
  }
}
