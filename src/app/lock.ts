// The run lock: one collection, export or scheduled job at a time per database, across processes
// (the daemon, a `collect` from crontab, a finance user's `report`). proper-lockfile's mkdir is atomic,
// its mtime is refreshed while held, and a lock left by a dead process is taken over at once when its
// note names a pid of this host that is gone, else once stale.
// Beside it, a small JSON note says who holds the lock, so a refusal can name the holder.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import lockfile from 'proper-lockfile';
import { silentLogger, type Logger } from '../log.js';
import { pidAlive } from '../process.js';

/** A held lock whose mtime is older than this belongs to a dead process and is taken over. */
export const RUN_LOCK_STALE_MS = 30_000;
/** How often the holder refreshes the lock's mtime; well under the stale time, so a slow event loop survives. */
export const RUN_LOCK_UPDATE_MS = 5_000;
/** Pause between attempts while another process holds the lock. */
export const RUN_LOCK_POLL_MS = 250;
/** proper-lockfile refuses stale times below this. */
const MIN_STALE_MS = 2_000;

export interface LockHolder {
  pid: number;
  command: string;
  started_at: string;
  hostname: string;
}

export interface RunLockOptions {
  /** How long to wait for another holder to finish; 0 = try once. */
  waitMs: number;
  /** What this process is doing, shown to whoever finds the lock held (e.g. "collect", "schedule hourly"). */
  command: string;
  log?: Logger;
  /** Stale threshold; every process sharing the database must use the same value. Default RUN_LOCK_STALE_MS. */
  staleMs?: number;
  /** Stops waiting early (the daemon shutting down); the promise then rejects with an AbortError. */
  signal?: AbortSignal;
  /** For the refusal message: paths are shown relative to this directory. Default process.cwd(). */
  cwd?: string;
}

export interface RunLock {
  readonly dbPath: string;
  readonly holder: LockHolder;
  /** Aborted when the lock is compromised (another process took it over): stop writing at once. */
  readonly signal: AbortSignal;
  /** Idempotent. */
  release(): Promise<void>;
}

/** The lock is held by someone else and the wait ran out. */
export class RunLockBusyError extends Error {
  override name = 'RunLockBusyError';
  constructor(
    readonly dbPath: string,
    readonly holder: LockHolder | null,
    readonly waitedMs: number,
    shownPath: string,
    staleMs: number = RUN_LOCK_STALE_MS,
  ) {
    super(busyMessage(shownPath, holder, waitedMs, staleMs));
  }
}

export function lockPaths(dbPath: string): { lock: string; note: string; progress: string } {
  const abs = resolve(dbPath);
  return { lock: `${abs}.lock`, note: `${abs}.lock.json`, progress: `${abs}.lock.progress.json` };
}

/** What the holder is doing, for `status` while it runs (written by the collector, removed with the lock). */
export interface RunProgress {
  pid: number;
  started_at: string;
  phase: string;
  requests_done: number;
  requests_planned: number;
  values_loaded: number;
  updated_at: string;
}

export function writeRunProgress(dbPath: string, p: RunProgress): void {
  const path = lockPaths(dbPath).progress;
  try {
    writeNote(path, p);
  } catch {
    // Progress is a courtesy to `status`; the run goes on without it.
  }
}

export function readRunProgress(dbPath: string): RunProgress | null {
  try {
    const v = JSON.parse(readFileSync(lockPaths(dbPath).progress, 'utf8')) as RunProgress;
    return typeof v.pid === 'number' ? v : null;
  } catch {
    return null;
  }
}

/** Locks this process holds, so that a second signal can drop them synchronously before exiting at once. */
const held = new Set<string>();

/** Removes this process's lock notes, progress files and lock directories now (for an immediate exit). */
export function releaseAllHeldLocks(): void {
  for (const abs of held) {
    const paths = lockPaths(abs);
    for (const p of [paths.note, paths.progress]) rmSync(p, { force: true });
    rmSync(paths.lock, { recursive: true, force: true });
  }
  held.clear();
}

/** Who holds the lock on this database, per its note; null when no note (or an unreadable one) exists. */
export function readLockHolder(dbPath: string): LockHolder | null {
  try {
    const v = JSON.parse(readFileSync(lockPaths(dbPath).note, 'utf8')) as Partial<LockHolder>;
    if (typeof v.pid !== 'number' || typeof v.command !== 'string' || typeof v.started_at !== 'string') return null;
    return {
      pid: v.pid,
      command: v.command,
      started_at: v.started_at,
      hostname: typeof v.hostname === 'string' ? v.hostname : '',
    };
  } catch {
    return null;
  }
}

/** One line naming the holder, for logs: "pid 123 (`schedule hourly`) since 2025-01-01T00:00:00.000Z". */
export function describeHolder(h: LockHolder | null): string {
  if (!h) return 'another process';
  const host = h.hostname && h.hostname !== hostname() ? ` on ${h.hostname}` : '';
  return `pid ${h.pid}${host} (\`${h.command}\`) since ${h.started_at}`;
}

function busyMessage(shownPath: string, h: LockHolder | null, waitedMs: number, staleMs: number): string {
  const who = h
    ? `another collection (pid ${h.pid}${h.hostname && h.hostname !== hostname() ? ` on ${h.hostname}` : ''}, \`${h.command}\`, since ${h.started_at})`
    : 'another collection';
  const waited = waitedMs >= 1000 ? ` (waited ${Math.round(waitedMs / 1000)} s)` : '';
  const dead =
    h && (!h.hostname || h.hostname === hostname()) && !pidAlive(h.pid)
      ? `; pid ${h.pid} is no longer running, so its lock will be taken over once stale, within ${Math.round(staleMs / 1000)} s`
      : '';
  return `${who} holds the lock on ${shownPath}${waited}; it will be released when that run ends${dead} — try again later`;
}

/**
 * A lock whose note names a process of this host that is no longer running is removed at once, rather
 * than after the stale time: a crashed run must not make the next one (the daemon's catch-up) wait or
 * give up. The note is read again just before removal, so a lock a live process took meanwhile stays.
 */
function takeOverDead(abs: string, log: Logger): boolean {
  const h = readLockHolder(abs);
  if (!h || (h.hostname && h.hostname !== hostname()) || h.pid === process.pid || pidAlive(h.pid)) return false;
  const again = readLockHolder(abs);
  if (!again || again.pid !== h.pid || again.started_at !== h.started_at) return false;
  const paths = lockPaths(abs);
  rmSync(paths.lock, { recursive: true, force: true });
  rmSync(paths.note, { force: true });
  log.warn('run lock left by a process that is no longer running: taken over', { db: abs, holder: describeHolder(h) });
  return true;
}

function shown(dbPath: string, cwd: string): string {
  const rel = relative(cwd, dbPath);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : dbPath;
}

function writeNote(path: string, holder: object): void {
  // Written to a temporary name and renamed, so a reader never sees half a note.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(holder) + '\n');
  renameSync(tmp, path);
}

/** The holder of a lock just taken, written to the lock's note for `status` and for a waiting run to show. */
function noteHolder(notePath: string, command: string, log: Logger): LockHolder {
  const holder: LockHolder = {
    pid: process.pid,
    command,
    started_at: new Date().toISOString(),
    hostname: hostname(),
  };
  try {
    writeNote(notePath, holder);
  } catch (err) {
    log.warn('cannot write the run lock note', { path: notePath, error: (err as Error).message });
  }
  return holder;
}

/** The release of a lock taken: removes its progress and note, then the lock, once; not a lock compromised. */
function releaser(
  abs: string,
  paths: ReturnType<typeof lockPaths>,
  holder: LockHolder,
  controller: AbortController,
  release: () => Promise<void>,
  log: Logger,
  state: { released: boolean },
): () => Promise<void> {
  return async () => {
    if (state.released) return;
    state.released = true;
    held.delete(abs);
    rmSync(paths.progress, { force: true });
    // The note goes first: once the lock directory is gone, the next holder may write its own.
    const current = readLockHolder(abs);
    if (current && current.pid === holder.pid && current.started_at === holder.started_at) {
      rmSync(paths.note, { force: true });
    }
    if (controller.signal.aborted) return; // compromised: the lock is no longer ours to remove
    try {
      await release();
    } catch (err) {
      log.warn('run lock release failed', { db: abs, error: (err as Error).message });
    }
  };
}

/**
 * Takes the run lock on `dbPath`, waiting up to `waitMs` for another holder. Works before the database
 * file exists. Throws RunLockBusyError when the wait runs out.
 */
export async function acquireRunLock(dbPath: string, opts: RunLockOptions): Promise<RunLock> {
  const log = opts.log ?? silentLogger;
  const abs = resolve(dbPath);
  const paths = lockPaths(abs);
  const staleMs = Math.max(opts.staleMs ?? RUN_LOCK_STALE_MS, MIN_STALE_MS);
  const controller = new AbortController();
  const started = Date.now();
  const state = { released: false };
  let loggedWait = false;
  // The lock sits beside the database, which may not exist yet (first run).
  mkdirSync(dirname(abs), { recursive: true });

  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      const release = await lockfile.lock(abs, {
        lockfilePath: paths.lock,
        realpath: false,
        stale: staleMs,
        update: Math.min(RUN_LOCK_UPDATE_MS, staleMs / 2),
        retries: 0,
        onCompromised: (err) => {
          // Another process took the lock over (we were frozen past the stale time, or the lock directory
          // was removed). Never throw from here: that would crash the process from a timer. Abort the run.
          if (state.released) return;
          log.error('run lock compromised: stopping the current run', { db: abs, error: err.message });
          controller.abort(new Error(`run lock on ${abs} was compromised: ${err.message}`));
        },
      });
      const holder = noteHolder(paths.note, opts.command, log);
      log.debug('run lock acquired', { db: abs, waited_ms: Date.now() - started });
      held.add(abs);
      return {
        dbPath: abs,
        holder,
        signal: controller.signal,
        release: releaser(abs, paths, holder, controller, release, log, state),
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      if (takeOverDead(abs, log)) continue;
    }
    const waited = Date.now() - started;
    if (waited >= opts.waitMs) {
      throw new RunLockBusyError(abs, readLockHolder(abs), waited, shown(abs, opts.cwd ?? process.cwd()), staleMs);
    }
    if (!loggedWait) {
      loggedWait = true;
      log.info('waiting for the run lock', {
        db: abs,
        holder: describeHolder(readLockHolder(abs)),
        wait_s: Math.round(opts.waitMs / 1000),
      });
    }
    await delay(
      Math.min(RUN_LOCK_POLL_MS, opts.waitMs - waited),
      undefined,
      opts.signal ? { signal: opts.signal } : undefined,
    );
  }
}

/**
 * Runs `fn` holding the run lock and releases it afterwards, whatever happens. `fn` gets the lock: pass
 * `lock.signal` to the work so that a compromised lock stops it.
 */
export async function withRunLock<T>(
  dbPath: string,
  opts: RunLockOptions,
  fn: (lock: RunLock) => Promise<T>,
): Promise<T> {
  const lock = await acquireRunLock(dbPath, opts);
  try {
    return await fn(lock);
  } finally {
    await lock.release();
  }
}
