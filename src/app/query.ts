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
  rows: Record<string, unknown>[];
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
    return { db, ...(await rawSql(store).queryTable(sql)) };
  } finally {
    await store.close();
  }
}
