// The analyst copy. DuckDB lets a single process hold a file for writing, and an analyst's open
// session (even read-only) would block the collector, or the collector would block the analyst.
// So analysts never open the collector's file: after each run the collector publishes a consistent
// copy next to it and renames it into place. An analyst session keeps the inode it opened, so a later
// publish never disturbs it; the next session opens the new copy.
//
// Copy method: ATTACH a fresh temporary file and COPY FROM DATABASE into it. COPY FROM DATABASE is
// one statement, so it reads one transactional snapshot of the store: the copy is consistent even
// if a batch committed a moment before, it works while the store stays open, and it never reads the
// store's file bytes while DuckDB might be writing them (a plain file copy could). It also writes a
// compact file without the store's free blocks. The copy is written, detached (closing it writes
// everything into the file), fsynced, and then renamed over the previous copy.
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { quoteIdent, quoteLiteral } from './sql.js';
import { analystCopyName, type Store } from './store.js';

const COPY_ALIAS = 'analyst_copy';

/** The analyst copy of a database file: data/usage.duckdb -> data/usage.analyst.duckdb. */
export function analystCopyPath(dbPath: string): string {
  return analystCopyName(dbPath);
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function removeCopyFiles(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.wal`, { force: true });
}

/** Publishes a read-only copy for analysts; returns its path. The store stays open throughout. */
export async function publishAnalystCopy(store: Store, opts: { target?: string; log?: Logger } = {}): Promise<string> {
  const log = opts.log;
  const target = resolve(opts.target ?? analystCopyPath(store.path));
  if (target === resolve(store.path)) throw new Error('the analyst copy cannot replace the database itself');
  const tmp = `${target}.tmp-${process.pid}`;
  removeCopyFiles(tmp); // left by a run that died while publishing

  await store.exclusive(async () => {
    await store.checkpoint();
    const [db] = await store.query<{ name: string }>('SELECT current_database() AS name');
    if (!db) throw new Error('cannot name the current database');
    await store.run(`ATTACH ${quoteLiteral(tmp)} AS ${quoteIdent(COPY_ALIAS)}`);
    try {
      await store.run(`COPY FROM DATABASE ${quoteIdent(db.name)} TO ${quoteIdent(COPY_ALIAS)}`);
    } finally {
      await store.run(`DETACH ${quoteIdent(COPY_ALIAS)}`);
    }
  }).catch((err: unknown) => {
    removeCopyFiles(tmp);
    throw err;
  });

  // DETACH closed the copy with a checkpoint: everything is in the file and no WAL is left.
  if (existsSync(`${tmp}.wal`)) {
    removeCopyFiles(tmp);
    throw new Error(`the analyst copy ${tmp} still had a WAL after DETACH; not published`);
  }
  fsyncPath(tmp);
  if (existsSync(`${target}.wal`)) {
    // Someone opened the previous copy read-write and changed it. That WAL belongs to the old file;
    // it is theirs to close, but a session opened on the new copy before they do would see it.
    log?.warn('the analyst copy is open read-write somewhere; analysts should open it read-only', { wal: `${target}.wal` });
  }
  renameSync(tmp, target);
  fsyncPath(dirname(target));
  return target;
}
