// The DuckDB store: opening the file (waiting politely for a held lock), migrations, collection runs,
// usage batches, inventory, coverage, and the read side for the planner and `status`.
//
// Concurrency: DuckDB lets one process hold a file for writing, and any process holding it (even
// read-only) blocks a writer. The collector therefore waits for a held lock with backoff, and analysts
// open the published copy (publish.ts) rather than this file. Inside the process, every write runs in
// the store's exclusive section, so a batch commit never interleaves with a transaction of the main
// connection.
import { AsyncLocalStorage } from 'node:async_hooks';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { silentLogger, type Logger } from '../log.js';
import type { CoverageStatus, RunStatus } from '../domain/status.js';
import { execSql, queryRows, queryTable, type SqlParams } from './connection.js';
import { FRAMEWORKS, PROGRAMS, SNAPSHOTS, upsertInventory } from './inventory.js';
import { migrate, type Migration } from './migrations.js';
import { readSql } from './sql.js';
import type {
  CoverageRow,
  CoverageSummaryRow,
  FrameworkRow,
  ProgramRow,
  RunRow,
  SnapshotRow,
  UsageBatch,
  UsageBatchSpec,
  UsageSummaryRow,
} from './types.js';
import { StagedUsageBatch } from './usageBatch.js';

export * from './types.js';
export { DeletionHeldError, PageContentError, UsageBatchError } from './usageBatch.js';
export { SchemaTooNewError } from './migrations.js';

/** DuckDB's threads per store: each thread holds its own working buffers, so memory grows with them;
 *  two keep loading and reports CPU-bound on a small server without multiplying memory on a large one. */
export const DEFAULT_THREADS = 2;
/** DuckDB's memory_limit when the caller names none (the configuration's default, store.memory_limit). */
export const DEFAULT_MEMORY_LIMIT = '512MB';

/** How long openStore waits for another process to release the file, by default. */
export const DEFAULT_LOCK_TIMEOUT_MS = 120_000;
/** Backoff between attempts to take a held file: first and largest wait. */
const LOCK_RETRY_FIRST_MS = 100;
const LOCK_RETRY_MAX_MS = 2_000;

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
  /** Ends the wait for a file held by another process (the run's stop signal). */
  signal?: AbortSignal;
  /** false: a missing file is StoreMissingError rather than a new database (readers such as report). */
  create?: boolean;
}

/** The database file does not exist and the command only reads what collect wrote. */
export class StoreMissingError extends Error {
  constructor(readonly path: string) {
    super(`The database ${path} does not exist yet: check --db (or store.db, USAGE_DB), or run \`usage-pipeline collect\` first.`);
    this.name = 'StoreMissingError';
  }
}

/** DuckDB's out-of-memory error (a query, a pin or a commit beyond memory_limit). */
export function isOutOfMemory(err: unknown): boolean {
  return /Out of Memory Error|could not allocate block|failed to pin block/i.test(err instanceof Error ? err.message : String(err));
}

/** Whether an error is DuckDB failing to read the file itself (truncated, bad checksum), not a query's fault. */
export function isStoreCorruption(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return err instanceof StoreCorruptError || /Could not read enough bytes|checksum|Corrupt database|not a valid DuckDB database/i.test(message);
}

/** The file is not a database DuckDB can open (truncated, corrupt, or another kind of file). */
export class StoreCorruptError extends Error {
  constructor(
    readonly path: string,
    cause: string,
  ) {
    super(`the database ${path} cannot be read: ${cause}. Restore it from a backup or move it aside and collect again; it was not changed.`);
    this.name = 'StoreCorruptError';
  }
}

/** The database file is held by another process (or, for a writer, by another store in this process). */
export class StoreLockedError extends Error {
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    detail: string,
  ) {
    super(
      `The database ${path} is in use by another process${detail ? ` (${detail})` : ''}; waited ${Math.round(waitedMs / 1000)} s. ` +
        `Wait for that process to finish (a running collect or report) and try again, or close the analyst session ` +
        `that has this file open: analysts should open the published copy ${analystCopyName(path)} instead, which ` +
        `never blocks collection.`,
    );
    this.name = 'StoreLockedError';
  }
}

// Kept here (and re-exported by publish.ts) so that the lock message can name the analyst copy.
export function analystCopyName(dbPath: string): string {
  const m = /^(.*?)(\.duckdb|\.ddb|\.db)?$/i.exec(dbPath);
  return `${m?.[1] ?? dbPath}.analyst.duckdb`;
}

const LOCK_CONFLICT = /Could not set lock on file|Conflicting lock/i;
/** What DuckDB says of a file it cannot read as a database (truncated, bad checksum, not DuckDB). */
const CORRUPT = /checksum|corrupt|not a valid DuckDB|IO Error|Serialization Error|database file .* is too small/i;

// DuckDB's file lock is a POSIX lock, which does not exclude a second open in the same process; this
// registry does, so that two stores in one process never write one file.
const inProcess = new Map<string, { writers: number; readers: number }>();

function takeInProcess(path: string, readOnly: boolean): boolean {
  if (path === IN_MEMORY) return true; // every in-memory instance is its own database
  const e = inProcess.get(path) ?? { writers: 0, readers: 0 };
  if (e.writers > 0 || (!readOnly && e.readers > 0)) return false;
  if (readOnly) e.readers++;
  else e.writers++;
  inProcess.set(path, e);
  return true;
}

function releaseInProcess(path: string, readOnly: boolean): void {
  if (path === IN_MEMORY) return;
  const e = inProcess.get(path);
  if (!e) return;
  if (readOnly) e.readers--;
  else e.writers--;
  if (e.writers <= 0 && e.readers <= 0) inProcess.delete(path);
}

class InProcessConflict extends Error {
  constructor() {
    super('Conflicting lock: the file is open in this process');
  }
}

/** DuckDB's name for a database that lives in memory only: no file, no lock, nothing to resolve. */
export const IN_MEMORY = ':memory:';

export async function openStore(opts: OpenOptions): Promise<Store> {
  const path = opts.path === IN_MEMORY ? IN_MEMORY : resolve(opts.path);
  const readOnly = opts.readOnly ?? false;
  const log = (opts.log ?? silentLogger).child({ db: path });
  const sleep = opts.sleep ?? ((ms: number) => delay(ms, undefined, opts.signal ? { signal: opts.signal } : undefined));
  const timeout = opts.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;

  if (path === IN_MEMORY) {
    if (readOnly) throw new Error('an in-memory database cannot be opened read-only: it would be empty');
  } else if (readOnly || opts.create === false) {
    if (!existsSync(path)) throw new StoreMissingError(path);
  } else {
    mkdirSync(dirname(path), { recursive: true });
  }

  let waited = 0;
  let wait = LOCK_RETRY_FIRST_MS;
  let instance: DuckDBInstance;
  for (;;) {
    try {
      if (!takeInProcess(path, readOnly)) throw new InProcessConflict();
      try {
        instance = await DuckDBInstance.create(path, {
          access_mode: readOnly ? 'READ_ONLY' : 'READ_WRITE',
          // Extensions beyond the built-in ones cannot be downloaded where this runs.
          autoinstall_known_extensions: 'false',
          autoload_known_extensions: 'true',
          memory_limit: opts.memoryLimit ?? DEFAULT_MEMORY_LIMIT,
          threads: String(opts.threads ?? DEFAULT_THREADS),
          // Keeping insertion order pins whole intermediate results in memory; every query that needs an order says ORDER BY.
          preserve_insertion_order: 'false',
        });
      } catch (err) {
        releaseInProcess(path, readOnly);
        const message = (err as Error).message ?? String(err);
        if (!LOCK_CONFLICT.test(message) && CORRUPT.test(message)) throw new StoreCorruptError(path, message.split('\n')[0] ?? message);
        throw err;
      }
      break;
    } catch (err) {
      const message = (err as Error).message ?? String(err);
      if (err instanceof StoreCorruptError || !LOCK_CONFLICT.test(message)) throw err;
      const holder = /\(PID (\d+)\)/.exec(message);
      const detail = err instanceof InProcessConflict ? 'open in this process' : holder ? `held by PID ${holder[1]}` : '';
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
      const n = await execSql(conn, readSql('src/store/sql/runs_mark_interrupted.sql'), { now: (opts.now ?? (() => new Date()))() });
      if (n > 0) log.warn('runs left running by a process that ended were marked interrupted', { runs: n });
    }
    return new Store(path, readOnly, instance, conn, log, opts.now ?? (() => new Date()), version);
  } catch (err) {
    conn?.closeSync();
    instance.closeSync();
    releaseInProcess(path, readOnly);
    // DuckDB reads the file's blocks lazily: a truncated file can open and then fail its first read.
    const message = (err as Error).message ?? String(err);
    if (!(err instanceof StoreCorruptError) && CORRUPT.test(message)) throw new StoreCorruptError(path, message.split('\n')[0] ?? message);
    throw err;
  }
}

interface SectionContext {
  inTransaction: boolean;
}

const SECRET_OPTION = /authorization|api[_-]?key|token|secret|password/i;

function optionsJson(options: unknown): string {
  return JSON.stringify(options ?? null, (k, v: unknown) => {
    if (k && SECRET_OPTION.test(k)) return '[redacted]';
    return typeof v === 'bigint' ? v.toString() : v;
  });
}

const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : 0);

/** Pages parsed at once across all batches: each pins several times its size (about 128 MB for a
 *  16 MB page) in DuckDB's memory, and the machine this was measured on has 2 cores. */
export const PAGE_SLOTS = 2;

/** A counting semaphore, FIFO. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

export class Store {
  private readonly section = new AsyncLocalStorage<SectionContext>();
  private tail: Promise<void> = Promise.resolve();
  private readonly batches = new Set<UsageBatch>();
  private readonly pageSlots = new Slots(PAGE_SLOTS);
  private closed = false;

  /** @internal Use openStore. */
  constructor(
    readonly path: string,
    readonly readOnly: boolean,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
    private readonly log: Logger,
    private readonly now: () => Date,
    private version: number,
  ) {}

  private assertOpen(): void {
    if (this.closed) throw new Error(`the store ${this.path} is closed`);
  }

  /**
   * Runs fn with no other store operation interleaved (reentrant: store calls made inside fn run
   * directly). Batch commits, transactions, queries and publishing all go through it.
   */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.section.getStore()) return fn();
    this.assertOpen();
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((r) => (release = r));
    await previous;
    try {
      return await this.section.run({ inTransaction: false }, fn);
    } finally {
      release();
    }
  }

  /** The highest migration applied to the file. */
  async schemaVersion(): Promise<number> {
    return this.version;
  }

  /**
   * Runs a query and returns row objects. Types: BIGINT/HUGEINT -> bigint, TIMESTAMPTZ -> Date,
   * DECIMAL -> string with every digit, VARCHAR -> string, INTEGER/DOUBLE -> number, NULL -> null.
   * Parameters: Date binds as TIMESTAMPTZ, bigint as BIGINT, arrays as lists; $1/? from an array, $name from an object.
   */
  async query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> {
    return this.exclusive(() => queryRows<T>(this.conn, sql, params));
  }

  /** One ad-hoc statement (the `query` command): its column names and rows. */
  async queryTable(sql: string): Promise<{ columns: string[]; rows: Record<string, unknown>[] }> {
    return this.exclusive(() => queryTable(this.conn, sql));
  }

  async run(sql: string, params?: SqlParams): Promise<void> {
    await this.exclusive(() => execSql(this.conn, sql, params));
  }

  /** BEGIN ... COMMIT around fn, ROLLBACK if it throws. A nested call joins the outer transaction. */
  async transaction<T>(fn: () => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      const ctx = this.section.getStore()!;
      if (ctx.inTransaction) return fn();
      ctx.inTransaction = true;
      await execSql(this.conn, 'BEGIN TRANSACTION');
      try {
        const result = await fn();
        await execSql(this.conn, 'COMMIT');
        return result;
      } catch (err) {
        await execSql(this.conn, 'ROLLBACK').catch((e: unknown) => this.log.warn('rollback failed', { error: e }));
        throw err;
      } finally {
        ctx.inTransaction = false;
      }
    });
  }

  // ---- collection runs

  async startRun(r: { runId: string; command: string; options: unknown }): Promise<void> {
    await this.run(readSql('src/store/sql/run_start.sql'), {
      run_id: r.runId,
      command: r.command,
      started_at: this.now(),
      options: optionsJson(r.options),
    });
  }

  async finishRun(r: {
    runId: string;
    status: Exclude<RunStatus, 'running'>;
    requests: number;
    retries: number;
    throttled: number;
    pages: number;
    rowsLoaded: number;
    inventoryRequests?: number;
    error?: string;
  }): Promise<void> {
    const changed = await this.exclusive(() =>
      execSql(this.conn, readSql('src/store/sql/run_finish.sql'), {
        run_id: r.runId,
        finished_at: this.now(),
        status: r.status,
        requests: BigInt(r.requests),
        retries: BigInt(r.retries),
        throttled: BigInt(r.throttled),
        pages: BigInt(r.pages),
        rows_loaded: BigInt(r.rowsLoaded),
        error: r.error ?? null,
        inventory_requests: BigInt(r.inventoryRequests ?? 0),
      }),
    );
    if (changed !== 1) throw new Error(`finishRun: no collection run ${r.runId} (startRun was not called)`);
  }

  // ---- usage

  /** A batch that stages rows and replaces exactly its window and scope when committed. */
  beginUsageBatch(spec: UsageBatchSpec): UsageBatch {
    this.assertOpen();
    const batch = new StagedUsageBatch(
      {
        connect: () => this.instance.connect(),
        exclusive: (fn) => this.exclusive(fn),
        pageSlot: (fn) => this.pageSlots.run(fn),
        batchClosed: (b) => this.batches.delete(b),
      },
      spec,
    );
    this.batches.add(batch);
    return batch;
  }

  // ---- inventory

  async upsertPrograms(rows: ProgramRow[], o: { seenAt: Date; completeForOrgs?: string[] }): Promise<void> {
    await this.exclusive(() =>
      upsertInventory(this.conn, PROGRAMS, rows, o.seenAt, o.completeForOrgs, (fn) => this.transaction(fn)),
    );
  }

  // ---- the inventory's progress (migration 006): it commits as it goes and resumes

  async inventoryState(key: string): Promise<string | null> {
    const [row] = await this.query<{ value: string | null }>(readSql('src/store/sql/inventory_state_get.sql'), { key });
    return row?.value ?? null;
  }

  async setInventoryState(key: string, value: string | null): Promise<void> {
    await this.run(readSql('src/store/sql/inventory_state_set.sql'), { key, value });
  }

  /** One page of the programs listing: the programs (not marking anything deleted) and their updated_at. */
  async recordProgramsPage(rows: (ProgramRow & { updated_at: Date | null })[], o: { seenAt: Date; cursorKey?: string; cursor?: string | null }): Promise<void> {
    await this.upsertPrograms(rows, { seenAt: o.seenAt });
    await this.transaction(async () => {
      if (rows.length > 0) {
        await execSql(this.conn, readSql('src/store/sql/inventory_program_updated.sql'), {
          program_ids: rows.map((r) => r.program_id),
          updated_ats: rows.map((r) => (r.updated_at ? r.updated_at.toISOString() : null)),
        });
      }
      if (o.cursorKey !== undefined) await execSql(this.conn, readSql('src/store/sql/inventory_state_set.sql'), { key: o.cursorKey, value: o.cursor ?? null });
    });
  }

  /** The programs listing reached its end: programs of these organizations it did not return are marked deleted. */
  async markProgramsUnseen(orgIds: string[], listingStartedAt: Date): Promise<void> {
    if (orgIds.length === 0) return;
    await this.run(readSql('src/store/sql/programs_mark_unseen.sql'), { seen_at: listingStartedAt, org_ids: orgIds });
  }

  /** Live programs' listings (frameworks, snapshots) worth a request, most useful first. */
  async inventoryListingsDue(o: { staleBefore: Date; orgIds: string[]; runId: string; force: boolean }): Promise<{ programId: string; kind: 'frameworks' | 'snapshots'; reason: number }[]> {
    const rows = await this.query<{ program_id: string; kind: 'frameworks' | 'snapshots'; reason: number }>(readSql('src/store/sql/inventory_programs_due.sql'), {
      stale_before: o.staleBefore,
      org_ids: o.orgIds,
      run_id: o.runId,
      force: o.force,
    });
    return rows.map((r) => ({ programId: r.program_id, kind: r.kind, reason: Number(r.reason) }));
  }

  /** Programs the inventory knows (live or deleted): what a full programs listing would page through. */
  async inventoryProgramTotal(): Promise<number> {
    const [row] = await this.query<{ n: bigint | number }>(readSql('src/store/sql/inventory_program_total.sql'));
    return Number(row?.n ?? 0);
  }

  async unknownProgramsInRun(runId: string): Promise<string[]> {
    const rows = await this.query<{ program_id: string }>(readSql('src/store/sql/inventory_unknown_programs.sql'), { run_id: runId });
    return rows.map((r) => r.program_id);
  }

  async markSought(kind: 'program' | 'framework', ids: string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.run(readSql('src/store/sql/inventory_sought_add.sql'), { kind, ids, at });
  }

  /** One batch of listings, each kind committed with its listing state (a listing not in the batch stays due). */
  async recordListings(o: {
    frameworksOf: string[];
    frameworks: FrameworkRow[];
    snapshotsOf: string[];
    snapshots: SnapshotRow[];
    listedAt: Date;
  }): Promise<void> {
    if (o.frameworksOf.length > 0) {
      await this.upsertFrameworks(o.frameworks, { seenAt: o.listedAt, completeForPrograms: o.frameworksOf });
      const unnamed = await this.query<{ framework_id: string }>(readSql('src/store/sql/inventory_unnamed_frameworks.sql'), { program_ids: o.frameworksOf });
      await this.transaction(async () => {
        await execSql(this.conn, readSql('src/store/sql/inventory_programs_listed.sql'), { program_ids: o.frameworksOf, kind: 'frameworks', listed_at: o.listedAt });
        if (unnamed.length > 0) {
          await execSql(this.conn, readSql('src/store/sql/inventory_sought_add.sql'), { kind: 'framework', ids: unnamed.map((r) => r.framework_id), at: o.listedAt });
        }
      });
    }
    if (o.snapshotsOf.length > 0) {
      await this.upsertSnapshots(o.snapshots, { seenAt: o.listedAt, completeForPrograms: o.snapshotsOf });
      await this.run(readSql('src/store/sql/inventory_programs_listed.sql'), { program_ids: o.snapshotsOf, kind: 'snapshots', listed_at: o.listedAt });
    }
  }

  async upsertFrameworks(rows: FrameworkRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    await this.exclusive(() =>
      upsertInventory(this.conn, FRAMEWORKS, rows, o.seenAt, o.completeForPrograms, (fn) => this.transaction(fn)),
    );
  }

  async upsertSnapshots(rows: SnapshotRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    await this.exclusive(() =>
      upsertInventory(this.conn, SNAPSHOTS, rows, o.seenAt, o.completeForPrograms, (fn) => this.transaction(fn)),
    );
  }

  // ---- coverage

  /** A coverage row without data: for not_eligible and failed scopes. Replaces the same window's row. */
  async recordCoverage(c: CoverageRow): Promise<void> {
    const key = {
      source: c.source,
      granularity: c.granularity,
      scope: c.scope,
      window_start: c.windowStart,
      window_end: c.windowEnd,
    };
    await this.transaction(async () => {
      // A failure leaves the window's earlier complete row in place: its data is still there.
      const unsuccessful = c.status === 'failed' || c.status === 'not_eligible';
      await execSql(
        this.conn,
        readSql(unsuccessful ? 'src/store/sql/coverage_delete_same_failed.sql' : 'src/store/sql/coverage_delete_same.sql'),
        key,
      );
      await execSql(this.conn, readSql('src/store/sql/coverage_insert.sql'), {
        ...key,
        status: c.status,
        rows: BigInt(c.rows ?? 0),
        run_id: c.runId,
        collected_at: c.collectedAt,
        detail: c.detail ?? null,
      });
    });
  }

  async coverageSummary(): Promise<CoverageSummaryRow[]> {
    const rows = await this.query(readSql('src/store/sql/coverage_summary.sql'));
    return rows.map((r) => ({
      source: r.source as string,
      granularity: r.granularity as string,
      scope: r.scope as string,
      firstCompleteStart: (r.first_complete_start as Date | null) ?? null,
      lastCompleteEnd: (r.last_complete_end as Date | null) ?? null,
      lastDataEnd: (r.last_data_end as Date | null) ?? null,
      completeWindows: num(r.complete_windows),
      lastCollectedAt: r.last_collected_at as Date,
      lastCompleteCollectedAt: (r.last_complete_collected_at as Date | null) ?? null,
      lastStatus: r.last_status as CoverageStatus,
      lastDetail: (r.last_detail as string | null) ?? null,
      lastRunId: r.last_run_id as string,
    }));
  }

  /**
   * The end (exclusive) of the latest complete window of a source and granularity, for one scope or,
   * without scope, the latest across all scopes (a failed scope does not hold it back: check
   * coverageSummary for those). null when nothing is complete yet.
   */
  async latestCompleteEnd(source: string, granularity: string, scope?: string): Promise<Date | null> {
    const [row] = await this.query<{ window_end: Date | null }>(readSql('src/store/sql/coverage_latest_complete_end.sql'), {
      source,
      granularity,
      by_scope: scope !== undefined,
      scope: scope ?? null,
    });
    return row?.window_end ?? null;
  }

  async lastRuns(n: number): Promise<RunRow[]> {
    const rows = await this.query(readSql('src/store/sql/runs_last.sql'), { n });
    return rows.map((r) => ({
      runId: r.run_id as string,
      command: r.command as string,
      startedAt: r.started_at as Date,
      finishedAt: (r.finished_at as Date | null) ?? null,
      status: r.status as RunStatus,
      requests: num(r.requests),
      retries: num(r.retries),
      throttled: num(r.throttled),
      pages: num(r.pages),
      rowsLoaded: num(r.rows_loaded),
      error: (r.error as string | null) ?? null,
      options: (r.options as string | null) ?? null,
      inventoryRequests: num(r.inventory_requests ?? 0),
    }));
  }

  /** Row counts and time span of the fact tables, per table, api version and granularity. */
  async usageSummary(): Promise<UsageSummaryRow[]> {
    const rows = await this.query(readSql('src/store/sql/usage_summary.sql'));
    return rows.map((r) => ({
      table: r.table_name as UsageSummaryRow['table'],
      apiVersion: (r.api_version as string | null) ?? null,
      granularity: r.granularity as string,
      rows: num(r.rows),
      firstStart: (r.first_start as Date | null) ?? null,
      lastEnd: (r.last_end as Date | null) ?? null,
      lastCollectedAt: (r.last_collected_at as Date | null) ?? null,
    }));
  }

  /** Writes the WAL into the database file. */
  async checkpoint(): Promise<void> {
    await this.run('CHECKPOINT');
  }

  /** Aborts open batches, waits for the running operation, and releases the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const b of [...this.batches]) await b.abort();
    await this.exclusive(async () => {
      this.closed = true;
    });
    try {
      this.conn.closeSync();
      this.instance.closeSync();
    } finally {
      releaseInProcess(this.path, this.readOnly);
    }
  }
}
