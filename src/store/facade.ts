// The Store: it owns the DuckDB connection, its exclusive section (a mutex, reentrant, so a batch commit
// never interleaves with a transaction of the main connection), transactions and memory limit. Every
// read and write of the database goes through one of its topic objects, each created once with the
// StoreContext below: store.runs, store.inventory, store.coverage, store.usage (facade/*.ts),
// store.dataset (facade/exports.ts) and store.report (report/data.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../log.js';
import { execSql, queryRows, queryTable, type SqlParams } from './connection.js';
import type { StoreContext } from './facade/context.js';
import { Coverage } from './facade/coverage.js';
import { DatasetExports } from './facade/exports.js';
import { Inventory } from './facade/inventory.js';
import { Runs } from './facade/runs.js';
import { Usage } from './facade/usage.js';
import { releaseInProcess } from './inProcessLock.js';
import { ReportData } from './report/data.js';
import { Slots } from './slots.js';
import { isOutOfMemory } from './errors.js';
import { quoteLiteral } from './sql.js';
import { RAW_SQL, type RawSql } from './rawSql.js';
import type { UsageBatch } from './types.js';
import { Alerts } from './alerts.js';

interface SectionContext {
  inTransaction: boolean;
}

/** Pages parsed at once across all batches: each pins several times its size (about 128 MB for a
 *  16 MB page) in DuckDB's memory, and the machine this was measured on has 2 cores. */
export const PAGE_SLOTS = 2;

/**
 * SET memory_limit. Setting it, even to the value it has, flushes DuckDB's allocator: its own cache and the C
 * library's free pages (malloc_trim), which pile up between pages and commits (BENCHMARKS.md, "Issue 13:
 * the collector's memory (2026-11-23)").
 */
async function applyMemoryLimit(conn: DuckDBConnection, limit: string): Promise<void> {
  await execSql(conn, `SET memory_limit = ${quoteLiteral(limit)}`);
}

const MEMORY_UNITS: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30 };

/** The bytes of a memory_limit as the configuration writes it ("64MB", "1GiB"); DuckDB counts KB as 1,000. */
export function memoryBytes(size: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i.exec(size.trim());
  const unit = m ? MEMORY_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new Error(`not a memory size: ${size} (expected a size such as "256MB")`);
  return Number(m[1]) * unit;
}

/** DuckDB's threads for a batch's commit at least: a collect stages its pages on one thread, but waits on the
 *  commits at its end, whose insert a second thread shortens by about a third (BENCHMARKS.md, "A commit's insert on two threads (2026-11-23)"). */
export const COMMIT_THREADS = 2;

/** Runs fn with DuckDB's threads at `threads` (for the whole database), then back to `restore`; a failed
 *  restore does not hide the error fn failed with. */
async function withThreads<T>(
  conn: DuckDBConnection,
  threads: number,
  restore: number,
  fn: () => Promise<T>,
): Promise<T> {
  if (threads === restore) return fn();
  await execSql(conn, `SET threads = ${threads}`);
  let out: T;
  try {
    out = await fn();
  } catch (err) {
    await execSql(conn, `SET threads = ${restore}`).catch(() => {
      // the error thrown below is the one to report; the setting is the connection's own
    });
    throw err;
  }
  await execSql(conn, `SET threads = ${restore}`);
  return out;
}

// Parameters: $db an attached database's name, or NULL for the store's own.
const STORAGE_FORMAT_SQL = `SELECT map_extract_value(tags, 'storage_version') AS format FROM duckdb_databases()
WHERE database_name = coalesce($db, current_database())`;

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
    /** DuckDB's memory_limit as last set (releaseMemory sets it again). */
    private limit: string,
    /** DuckDB's threads as opened. */
    private readonly threads: number,
  ) {
    const cx: StoreContext = {
      conn: this.conn,
      sql: this[RAW_SQL],
      exec: (sql, params) => this.exclusive(() => execSql(this.conn, sql, params)),
      transaction: (fn) => this.transaction(fn),
      exclusive: (fn) => this.exclusive(fn),
      now: () => this.now(),
      memoryLimit: () => this.limit,
      setMemoryLimit: (limit) => this.setMemoryLimit(limit),
      releaseMemory: () => this.releaseMemory(),
    };
    this.runs = new Runs(cx);
    this.alerts = new Alerts(cx);
    this.inventory = new Inventory(cx);
    this.coverage = new Coverage(cx);
    this.dataset = new DatasetExports(cx);
    this.report = new ReportData(cx);
    this.usage = new Usage(cx, {
      assertOpen: () => this.assertOpen(),
      open: this.batches,
      host: {
        connect: () => this.instance.connect(),
        exclusive: (fn) => this.exclusive(fn),
        pageSlot: (fn) => this.pageSlots.run(fn),
        allPageSlots: (fn) => this.pageSlots.runAlone(fn),
        releaseMemory: (conn) => applyMemoryLimit(conn, this.limit),
        onCommitThreads: (conn, fn) => withThreads(conn, Math.max(this.threads, COMMIT_THREADS), this.threads, fn),
      },
    });
  }

  /** Collection runs: started, finished, the latest. */
  readonly runs: Runs;
  /** Programs, frameworks, snapshots, organizations and the inventory's progress. */
  readonly inventory: Inventory;
  /** Which windows of each source, granularity and scope are collected. */
  readonly coverage: Coverage;
  /** Usage batches, the fact tables' counts, the frameworks the usage names, retention. */
  readonly usage: Usage;
  /** The dataset export: its units, fingerprints, staging and the record of what each export wrote. */
  readonly dataset: DatasetExports;
  /** The report's stages, tables, settings, FOCUS, finalisation and price tables. */
  readonly report: ReportData;
  /** Alerts: the rules' priced days, the alerts fired, acknowledgements, deliveries, spending limits. */
  readonly alerts: Alerts;

  /** DuckDB's memory_limit as the store set it (a size such as '256MB'). */
  get memoryLimit(): string {
    return this.limit;
  }

  /** SET memory_limit (for the whole database), kept for releaseMemory. */
  async setMemoryLimit(limit: string): Promise<void> {
    await this.exclusive(() => applyMemoryLimit(this.conn, limit));
    this.limit = limit;
  }

  /**
   * Runs fn with DuckDB's memory_limit at `limit`, then back to the store's own. DuckDB refuses a limit
   * below what it holds pinned (its indexes among them), or fn runs out under it: fn then runs again at
   * the store's own limit, rather than not at all, so fn must be safe to run twice.
   */
  async atMemoryLimit<T>(limit: string, fn: () => Promise<T>): Promise<T> {
    const own = this.limit;
    if (limit === own) return fn();
    try {
      await this.setMemoryLimit(limit);
      return await fn();
    } catch (err) {
      if (!isOutOfMemory(err)) throw err;
      await this.setMemoryLimit(own);
      return await fn();
    } finally {
      await this.setMemoryLimit(own);
    }
  }

  /** Hands back what DuckDB's allocator and the C library keep after a large statement (applyMemoryLimit). */
  async releaseMemory(): Promise<void> {
    await this.exclusive(() => applyMemoryLimit(this.conn, this.limit));
  }

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

  /** The storage format DuckDB writes the file in ('v1.0.0+', 'v1.5.0+'), or that of an attached `database`. */
  async storageFormat(database?: string): Promise<string> {
    const [row] = await this.query<{ format: string | null }>(STORAGE_FORMAT_SQL, { db: database ?? null });
    return row?.format ?? 'unknown';
  }

  /** Raw SQL (store/rawSql.ts): for the store's modules and the analysts' `query` command only. */
  readonly [RAW_SQL]: RawSql = {
    query: <T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> => this.query<T>(sql, params),
    run: (sql: string, params?: SqlParams): Promise<void> => this.run(sql, params),
    queryTable: (sql: string) => this.exclusive(() => queryTable(this.conn, sql)),
  };

  private async query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]> {
    return this.exclusive(() => queryRows<T>(this.conn, sql, params));
  }

  private async run(sql: string, params?: SqlParams): Promise<void> {
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

  /** Writes the WAL into the database file. */
  async checkpoint(): Promise<void> {
    await this.run('CHECKPOINT');
  }

  /** Stops the statement running on the main connection: it fails with DuckDB's interrupt error. */
  interrupt(): void {
    this.conn.interrupt();
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
      // Node keeps every AsyncLocalStorage that ever ran in a process-wide list until it is disabled, and gives
      // each new promise a slot per listed one: a daemon opening a store per run would slow and grow per run.
      this.section.disable();
    }
  }
}
