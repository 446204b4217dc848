// compactStore(): the database rewritten in the store's storage format and without its free space
// (store/compact.ts), after checking there is a database and room beside it for the new file.
import { existsSync, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { compactDatabase, type CompactResult } from '../store/compact.js';
import { openCommandStore, type CommandContext } from './context.js';

export type { CompactResult };

/** The checks made before anything is opened: a database to rewrite, and room for the new file beside it. */
export function compactSettings(ctx: CommandContext): { db: string } {
  const db = resolve(ctx.dbPath);
  if (!existsSync(db)) throw new UsageError(`no database at ${db}: nothing to compact.`);
  const need = statSync(db).size;
  const fs = statfsSync(dirname(db));
  const free = Number(fs.bavail) * Number(fs.bsize);
  if (free < need)
    throw new UsageError(
      `compact writes a new file beside ${db} of up to its size (${gb(need)}), and ${gb(free)} is free there: ` +
        'free some space and run again.',
    );
  return { db };
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

export async function compactStore(ctx: CommandContext, signal?: AbortSignal): Promise<CompactResult> {
  compactSettings(ctx);
  const store = await openCommandStore(ctx, ctx.log, { create: false, ...(signal ? { signal } : {}) });
  const r = await compactDatabase(store);
  ctx.log.info('database rewritten', {
    db: r.db,
    format_before: r.formatBefore,
    format_after: r.formatAfter,
    bytes_before: r.bytesBefore,
    bytes_after: r.bytesAfter,
  });
  return r;
}
