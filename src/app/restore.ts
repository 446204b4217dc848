// restoreDatabase(): the database rebuilt from its analyst copy (the copy and its part files), after the
// database itself was found damaged and moved aside. Refuses while a database file is in its place.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { analystCopyPath, restoreFromAnalystCopy } from '../store/publish.js';
import type { CommandContext } from './context.js';

export interface RestoreResult {
  db: string;
  from: string;
  tables: number;
}

/** The checks made before anything is written: no database in the way, a copy to restore from. */
export function restoreSettings(ctx: CommandContext, from?: string): { db: string; from: string } {
  const db = resolve(ctx.dbPath);
  const copy = resolve(from ?? analystCopyPath(db));
  if (existsSync(db) || existsSync(`${db}.wal`))
    throw new UsageError(
      `${db} exists: restore writes a new database, so move the damaged file (and its .wal, if any) aside first.`,
    );
  if (!existsSync(copy))
    throw new UsageError(`no analyst copy at ${copy} to restore from; give one with --from, or restore a backup.`);
  return { db, from: copy };
}

export async function restoreDatabase(ctx: CommandContext, from?: string): Promise<RestoreResult> {
  const s = restoreSettings(ctx, from);
  const { tables } = await restoreFromAnalystCopy(s.from, s.db);
  ctx.log.info('database restored from the analyst copy', { db: s.db, from: s.from, tables });
  return { ...s, tables };
}
