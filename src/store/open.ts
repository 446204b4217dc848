// Opening the database file: waiting politely (backoff with jitter) for a lock another process holds,
// telling a corrupt file from a held one, migrating, and marking runs a dead process left running.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { CONFIG_DEFAULTS } from '../config/schema.js';
import { silentLogger, type Logger } from '../log.js';
import { execSql } from './connection.js';
import { StoreCorruptError, StoreLockedError, StoreMissingError } from './errors.js';
import { IN_MEMORY, InProcessConflict, releaseInProcess, takeInProcess } from './inProcessLock.js';
import { migrate, type Migration } from './migrations.js';
import { Store } from './facade.js';

// At a writer's open no other writer can be running, so runs still `running` were left by a process
// that ended (a crash, SIGKILL): they are marked `interrupted`. Parameters: $now TIMESTAMPTZ.
const RUNS_MARK_INTERRUPTED_SQL = `
UPDATE collection_runs
SET status = 'interrupted', finished_at = $now, error = coalesce(error, 'the process ended before the run finished')
WHERE status = 'running';`;

/** How long openStore waits for another process to release the file, by default. */
export const DEFAULT_LOCK_TIMEOUT_MS = CONFIG_DEFAULTS.store.lock_timeout_seconds * 1000;
/** DuckDB's threads per store: each thread holds its own working buffers, so memory grows with them;
 *  two keep loading and reports CPU-bound on a small server without multiplying memory on a large one. */
export const DEFAULT_THREADS = 2;
/** Backoff between attempts to take a held file: first and largest wait. */
const LOCK_RETRY_FIRST_MS = 100;
const LOCK_RETRY_MAX_MS = 2_000;
/** The storage format a new database file is written in. In DuckDB's default (v1.0.0) a checkpoint cannot
 *  reuse an unchanged row group's metadata and visited every row group of a year-long file (0.5 s for a
 *  one-row change at a year of `large`, 36 ms in this format: BENCHMARKS.md, "The store in DuckDB's
 *  storage format v1.5.0"). A file keeps the format it was created in (`compact` rewrites an older one). */
export const STORE_STORAGE_VERSION = 'v1.5.0';

export interface OpenOptions {
  path: string;
  readOnly?: boolean;
  /** How long to wait for a file held by another process before StoreLockedError. Default 120000. */
  lockTimeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
  log?: Logger;
  /** Clock for run and migration times; tests inject one. */
  now?: () => Date;
  /** For tests: the migrations to apply instead of queries/schema. */
  migrations?: Migration[];
  /** DuckDB's memory_limit (e.g. '512MB'); beyond it, staged batches spill to `<db>.tmp/`. */
  memoryLimit?: string;
  /** DuckDB's threads; DEFAULT_THREADS when omitted. */
  threads?: number;
  /** DuckDB's checkpoint_threshold: the write-ahead log's size at which a commit checkpoints (DuckDB's
   *  default, 16MB, when omitted). */
  checkpointThreshold?: string;
  /** Ends the wait for a file held by another process (the run's stop signal). */
  signal?: AbortSignal;
  /** false: a missing file is StoreMissingError rather than a new database (readers such as report). */
  create?: boolean;
}

const LOCK_CONFLICT = /Could not set lock on file|Conflicting lock/i;
/** What DuckDB says of a file it cannot read as a database (truncated, bad checksum, not DuckDB). */
const CORRUPT = /checksum|corrupt|not a valid DuckDB|IO Error|Serialization Error|database file .* is too small/i;

/** Refuses an in-memory read-only store and a missing file that must exist; else makes the file's folder. */
function preparePath(path: string, readOnly: boolean, opts: OpenOptions): void {
  if (path === IN_MEMORY) {
    if (readOnly) throw new Error('an in-memory database cannot be opened read-only: it would be empty');
  } else if (readOnly || opts.create === false) {
    if (!existsSync(path)) throw new StoreMissingError(path);
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }
}

/**
 * Opens the DuckDB instance once this process holds no conflicting open of the file; a file DuckDB
 * cannot read as a database is a StoreCorruptError, a lock conflict is thrown as is (to wait and retry).
 */
async function createInstance(path: string, readOnly: boolean, opts: OpenOptions): Promise<DuckDBInstance> {
  if (!takeInProcess(path, readOnly)) throw new InProcessConflict();
  try {
    return await DuckDBInstance.create(path, {
      access_mode: readOnly ? 'READ_ONLY' : 'READ_WRITE',
      // Extensions beyond the built-in ones cannot be downloaded where this runs.
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'true',
      memory_limit: opts.memoryLimit ?? CONFIG_DEFAULTS.store.memory_limit,
      threads: String(opts.threads ?? DEFAULT_THREADS),
      // Keeping insertion order pins whole intermediate results in memory; every query that needs an order says ORDER BY.
      preserve_insertion_order: 'false',
      storage_compatibility_version: STORE_STORAGE_VERSION,
      ...(opts.checkpointThreshold !== undefined ? { checkpoint_threshold: opts.checkpointThreshold } : {}),
    });
  } catch (err) {
    releaseInProcess(path, readOnly);
    const message = (err as Error).message ?? String(err);
    if (!LOCK_CONFLICT.test(message) && CORRUPT.test(message))
      throw new StoreCorruptError(path, message.split('\n')[0] ?? message);
    throw err;
  }
}

export async function openStore(opts: OpenOptions): Promise<Store> {
  const path = opts.path === IN_MEMORY ? IN_MEMORY : resolve(opts.path);
  const readOnly = opts.readOnly ?? false;
  const log = (opts.log ?? silentLogger).child({ db: path });
  const sleep = opts.sleep ?? ((ms: number) => delay(ms, undefined, opts.signal ? { signal: opts.signal } : undefined));
  const timeout = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;

  preparePath(path, readOnly, opts);

  let waited = 0;
  let wait = LOCK_RETRY_FIRST_MS;
  let instance: DuckDBInstance;
  for (;;) {
    try {
      instance = await createInstance(path, readOnly, opts);
      break;
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      if (err instanceof StoreCorruptError || !LOCK_CONFLICT.test(message)) throw err;
      const holder = /\(PID (\d+)\)/.exec(message);
      const detail =
        err instanceof InProcessConflict ? 'open in this process' : holder ? `held by PID ${holder[1]}` : '';
      if (waited >= timeout) throw new StoreLockedError(path, waited, detail);
      opts.signal?.throwIfAborted();
      if (waited === 0) {
        log.warn('database file is in use by another process; waiting for it', { holder: detail, timeout_ms: timeout });
      }
      // Jitter keeps two waiting writers from retrying in step.
      const ms = Math.min(Math.round(wait * (0.8 + Math.random() * 0.4)), timeout - waited);
      await sleep(ms);
      waited += ms;
      wait = Math.min(wait * 2, LOCK_RETRY_MAX_MS);
    }
  }
  if (waited > 0) log.info('database file released; continuing', { waited_ms: waited });

  let conn: DuckDBConnection | undefined;
  try {
    conn = await instance.connect();
    // ICU is built in but loads after the instance's config, so TimeZone is set here, globally, so that
    // every connection of this instance (batches open their own) reads and writes UTC.
    await execSql(conn, "SET GLOBAL TimeZone = 'UTC'");
    const version = await migrate(conn, { path, readOnly, log, now: opts.now, migrations: opts.migrations });
    if (!readOnly && opts.migrations === undefined) {
      const n = await execSql(conn, RUNS_MARK_INTERRUPTED_SQL, { now: (opts.now ?? (() => new Date()))() });
      if (n > 0) log.warn('runs left running by a process that ended were marked interrupted', { runs: n });
    }
    return new Store(
      path,
      readOnly,
      instance,
      conn,
      log,
      opts.now ?? (() => new Date()),
      version,
      opts.memoryLimit ?? CONFIG_DEFAULTS.store.memory_limit,
      opts.threads ?? DEFAULT_THREADS,
    );
  } catch (err) {
    conn?.closeSync();
    instance.closeSync();
    releaseInProcess(path, readOnly);
    // DuckDB reads the file's blocks lazily: a truncated file can open and then fail its first read.
    const message = (err as Error).message ?? String(err);
    if (!(err instanceof StoreCorruptError) && CORRUPT.test(message))
      throw new StoreCorruptError(path, message.split('\n')[0] ?? message);
    throw err;
  }
}
