// The analyst copy. DuckDB lets a single process hold a file for writing, and an analyst's open
// session (even read-only) would block the collector, or the collector would block the analyst.
// So analysts never open the collector's file: after each run the collector publishes a consistent
// copy next to it and renames it into place. An analyst session keeps the inode it opened, so a later
// publish never disturbs it; the next session opens the new copy.
//
// Copy method: CHECKPOINT (everything committed is then in the main file and the WAL is empty), and
// copy the file's bytes while no other operation of the store can run (Store.exclusive; no other
// process can write it, DuckDB holds its lock). The kernel copies the file (copy_file_range), far
// faster than rewriting it with ATTACH + COPY FROM DATABASE. The copy is fsynced and then renamed over
// the previous copy.
import { closeSync, existsSync, fsyncSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { copyFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { pidAlive } from '../process.js';
import { analystCopyName, type Store } from './store.js';

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

/** Removes `<copy>.tmp-PID` files (and their WAL) of this process or of processes no longer running. */
function removeStaleCopies(target: string): void {
  const prefix = `${basename(target)}.tmp-`;
  for (const name of readdirSync(dirname(target))) {
    const pid = name.startsWith(prefix) ? Number(/^(\d+)(\.wal)?$/.exec(name.slice(prefix.length))?.[1]) : NaN;
    if (Number.isInteger(pid) && (pid === process.pid || !pidAlive(pid)))
      rmSync(join(dirname(target), name), { force: true });
  }
}

/** Publishes a read-only copy for analysts; returns its path. The store stays open throughout. */
export async function publishAnalystCopy(store: Store, opts: { target?: string; log?: Logger } = {}): Promise<string> {
  const log = opts.log;
  const target = resolve(opts.target ?? analystCopyPath(store.path));
  if (target === resolve(store.path)) throw new Error('the analyst copy cannot replace the database itself');
  const tmp = `${target}.tmp-${process.pid}`;
  removeStaleCopies(target); // left by runs that died while publishing

  await store
    .exclusive(async () => {
      await store.checkpoint();
      if (existsSync(`${store.path}.wal`) && statSync(`${store.path}.wal`).size > 0) {
        throw new Error(`the database still had a WAL after CHECKPOINT; the analyst copy was not published`);
      }
      await copyFile(store.path, tmp);
    })
    .catch((err: unknown) => {
      removeCopyFiles(tmp);
      throw err;
    });
  fsyncPath(tmp);
  if (existsSync(`${target}.wal`)) {
    // Someone opened the previous copy read-write and changed it. That WAL belongs to the old file;
    // it is theirs to close, but a session opened on the new copy before they do would see it.
    log?.warn('the analyst copy is open read-write somewhere; analysts should open it read-only', {
      wal: `${target}.wal`,
    });
  }
  renameSync(tmp, target);
  fsyncPath(dirname(target));
  return target;
}
