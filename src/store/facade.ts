// The store's facade: every read and write of the database goes through its methods, inside its
// exclusive section (a mutex, reentrant, so a batch commit never interleaves with a transaction of the
// main connection). The methods of each topic live in store/facade/ (runs, inventory, the frameworks
// the usage names, coverage, the dataset export, status) and take the StoreContext this class gives
// them; usage batches are usageBatch.ts.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../log.js';
import { execSql, queryRows, queryTable, type SqlParams } from './connection.js';
import type { ChangedWindow, DatasetFingerprint, DatasetPartitionKey } from './dataset.js';
import type { StoreContext } from './facade/context.js';
import * as coverage from './facade/coverage.js';
import * as exports from './facade/exports.js';
import * as frameworksInUsage from './facade/frameworksInUsage.js';
import * as inventory from './facade/inventory.js';
import * as retention from './facade/retention.js';
import * as runs from './facade/runs.js';
import * as summary from './facade/summary.js';
import { releaseInProcess } from './inProcessLock.js';
import { Slots } from './slots.js';
import { quoteLiteral } from './sql.js';
import { RAW_SQL, type RawSql } from './rawSql.js';
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

/** DuckDB's threads for a batch's commit at least: a collect stages its pages on one thread, but waits on the
 *  commits at its end, whose insert a second thread shortens by about a third (BENCHMARKS.md, "A commit's insert on two threads (2026-11-23)"). */
export const COMMIT_THREADS = 2;

/** Runs fn with DuckDB's threads at `threads` (for the whole database), then back to `restore`; a failed
 *  restore does not hide the error fn failed with. */
async function withThreads<T>(conn: DuckDBConnection, threads: number, restore: number, fn: () => Promise<T>): Promise<T> {
  if (threads === restore) return fn();
  await execSql(conn, `SET threads = ${threads}`);
  let out: T;
  try {
    out = await fn();
  } catch (err) {
    await execSql(conn, `SET threads = ${restore}`).catch(() => {});
    throw err;
  }
  await execSql(conn, `SET threads = ${restore}`);
  return out;
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
    /** DuckDB's memory_limit as last set (releaseMemory sets it again). */
    private limit: string,
    /** DuckDB's threads as opened. */
    private readonly threads: number,
  ) {
    this.ctx = {
      conn: this.conn,
      sql: this[RAW_SQL],
      exec: (sql, params) => this.exclusive(() => execSql(this.conn, sql, params)),
      transaction: (fn) => this.transaction(fn),
      exclusive: (fn) => this.exclusive(fn),
      now: () => this.now(),
    };
  }

  /** DuckDB's memory_limit as the store set it (a size such as '256MB'). */
  get memoryLimit(): string {
    return this.limit;
  }

  /** SET memory_limit (for the whole database), kept for releaseMemory. */
  async setMemoryLimit(limit: string): Promise<void> {
    await this.exclusive(() => applyMemoryLimit(this.conn, limit));
    this.limit = limit;
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

  /** What the topic modules of store/facade/ run through. */
  private readonly ctx: StoreContext;

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

  // ---- usage

  /** A batch that stages rows and replaces exactly its window and scope when committed. */
  beginUsageBatch(spec: UsageBatchSpec): UsageBatch {
    this.assertOpen();
    const batch = new StagedUsageBatch(
      {
        connect: () => this.instance.connect(),
        exclusive: (fn) => this.exclusive(fn),
        pageSlot: (fn) => this.pageSlots.run(fn),
        releaseMemory: (conn) => applyMemoryLimit(conn, this.limit),
        onCommitThreads: (conn, fn) => withThreads(conn, Math.max(this.threads, COMMIT_THREADS), this.threads, fn),
        batchClosed: (b) => this.batches.delete(b),
      },
      spec,
    );
    this.batches.add(batch);
    return batch;
  }

  // ---- collection runs (facade/runs.ts)

  startRun(r: { runId: string; command: string; options: unknown }): Promise<void> {
    return runs.startRun(this.ctx, r);
  }

  finishRun(r: runs.RunFinish): Promise<void> {
    return runs.finishRun(this.ctx, r);
  }

  lastRuns(n: number): Promise<RunRow[]> {
    return runs.lastRuns(this.ctx, n);
  }

  // ---- inventory and its progress (facade/inventory.ts)

  upsertPrograms(rows: ProgramRow[], o: { seenAt: Date; completeForOrgs?: string[] }): Promise<void> {
    return inventory.upsertPrograms(this.ctx, rows, o);
  }

  inventoryState(key: string): Promise<string | null> {
    return inventory.inventoryState(this.ctx, key);
  }

  setInventoryState(key: string, value: string | null): Promise<void> {
    return inventory.setInventoryState(this.ctx, key, value);
  }

  recordProgramsPage(rows: (ProgramRow & { updated_at: Date | null })[], o: { seenAt: Date; cursorKey?: string; cursor?: string | null }): Promise<void> {
    return inventory.recordProgramsPage(this.ctx, rows, o);
  }

  markProgramsUnseen(orgIds: string[], listingStartedAt: Date): Promise<void> {
    return inventory.markProgramsUnseen(this.ctx, orgIds, listingStartedAt);
  }

  inventoryListingsDue(o: { staleBefore: Date; orgIds: string[]; runId: string; force: boolean }): Promise<{ programId: string; kind: 'frameworks' | 'snapshots'; reason: number }[]> {
    return inventory.inventoryListingsDue(this.ctx, o);
  }

  inventoryProgramTotal(): Promise<number> {
    return inventory.inventoryProgramTotal(this.ctx);
  }

  inventoryProgramCount(orgId: string): Promise<number> {
    return inventory.inventoryProgramCount(this.ctx, orgId);
  }

  frameworkCountsByProgram(programIds: string[], windowStart: Date): Promise<Map<string, { known: number; listable: number }>> {
    return inventory.frameworkCountsByProgram(this.ctx, programIds, windowStart);
  }

  frameworksInUsageByProgram(orgId: string, windowStart: Date): Promise<Map<string, number>> {
    return frameworksInUsage.frameworksInUsageByProgram(this.ctx, orgId, windowStart);
  }

  upsertOrganization(o: { orgId: string; name: string | null; seenAt: Date }): Promise<void> {
    return inventory.upsertOrganization(this.ctx, o);
  }

  unknownProgramsInRun(runId: string): Promise<string[]> {
    return inventory.unknownProgramsInRun(this.ctx, runId);
  }

  markSought(kind: 'program' | 'framework', ids: string[], at: Date): Promise<void> {
    return inventory.markSought(this.ctx, kind, ids, at);
  }

  recordListings(o: inventory.ListingsBatch): Promise<void> {
    return inventory.recordListings(this.ctx, o);
  }

  upsertFrameworks(rows: FrameworkRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    return inventory.upsertFrameworks(this.ctx, rows, o);
  }

  upsertSnapshots(rows: SnapshotRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    return inventory.upsertSnapshots(this.ctx, rows, o);
  }

  // ---- coverage (facade/coverage.ts)

  recordCoverage(c: CoverageRow): Promise<void> {
    return coverage.recordCoverage(this.ctx, c);
  }

  coverageSummary(): Promise<CoverageSummaryRow[]> {
    return coverage.coverageSummary(this.ctx);
  }

  latestCompleteEnd(source: string, granularity: string, scope?: string): Promise<Date | null> {
    return coverage.latestCompleteEnd(this.ctx, source, granularity, scope);
  }

  // ---- the dataset export (facade/exports.ts)

  exportedPartitions(dir: string): Promise<Map<string, string>> {
    return exports.exportedPartitions(this.ctx, dir);
  }

  recordExportedPartition(r: { dir: string; partition: string; fingerprint: string; rows: number; sha256: string; exportedAt: Date }): Promise<void> {
    return exports.recordExportedPartition(this.ctx, r);
  }

  forgetExportedPartition(dir: string, partition: string): Promise<void> {
    return exports.forgetExportedPartition(this.ctx, dir, partition);
  }

  exportedRows(dir: string): Promise<number> {
    return exports.exportedRows(this.ctx, dir);
  }

  datasetUnits(): Promise<DatasetPartitionKey[]> {
    return exports.datasetUnits(this.ctx);
  }

  datasetState(dir: string): Promise<exports.DatasetState | undefined> {
    return exports.datasetState(this.ctx, dir);
  }

  recordDatasetExported(dir: string, state: exports.DatasetState, at: Date): Promise<void> {
    return exports.recordDatasetExported(this.ctx, dir, state, at);
  }

  datasetRunsPending(dir: string): Promise<number> {
    return exports.runsPending(this.ctx, dir);
  }

  datasetChangedWindows(dir: string): Promise<ChangedWindow[]> {
    return exports.changedWindows(this.ctx, dir);
  }

  datasetFingerprint(p: DatasetPartitionKey): Promise<DatasetFingerprint> {
    return exports.datasetFingerprint(this.ctx, p);
  }

  datasetContextDigest(names: boolean): Promise<{ prices: string; names?: string }> {
    return exports.contextDigest(this.ctx, names);
  }

  datasetStagedFingerprint(): Promise<DatasetFingerprint> {
    return exports.stagedFingerprint(this.ctx);
  }

  datasetSpendMonths(): Promise<string[]> {
    return exports.spendMonths(this.ctx);
  }

  /** Stages one unit; returns the runs that wrote its rows. */
  stageDatasetPartition(p: DatasetPartitionKey): Promise<string[]> {
    return exports.stageDatasetPartition(this.ctx, p);
  }

  copyStagedPartition(path: string): Promise<void> {
    return exports.copyStagedPartition(this.ctx, path);
  }

  dropStagedPartition(): Promise<void> {
    return exports.dropStagedPartition(this.ctx);
  }

  // ---- retention (facade/retention.ts)

  hourlyDaysBefore(cutoff: Date): Promise<retention.HourlyDay[]> {
    return retention.hourlyDaysBefore(this.ctx, cutoff);
  }

  removeHourlyBefore(runId: string, cutoff: Date, days: retention.HourlyDay[]): Promise<retention.Removal[]> {
    return retention.removeHourlyBefore(this.ctx, runId, cutoff, days);
  }

  // ---- status (facade/summary.ts)

  usageRowCounts(): Promise<{ usage_program: number; usage_framework: number }> {
    return summary.usageRowCounts(this.ctx);
  }

  dimensionCounts(): Promise<{ programs: number; frameworks: number; snapshots: number }> {
    return summary.dimensionCounts(this.ctx);
  }

  usageSummary(): Promise<UsageSummaryRow[]> {
    return summary.usageSummary(this.ctx);
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
