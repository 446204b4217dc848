// The store's facade: every read and write of the database goes through its methods, inside its
// exclusive section (a mutex, reentrant, so a batch commit never interleaves with a transaction of the
// main connection): collection runs, usage batches, inventory, coverage, and the read side for the
// planner and `status`.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '../log.js';
import type { CoverageStatus, RunStatus } from '../domain/status.js';
import { execSql, queryRows, queryTable, type SqlParams } from './connection.js';
import {
  copyPartitionSql,
  DIMENSION_PARTITION_SQL,
  DROP_STAGED_PARTITION,
  PARTITIONS_SQL_FILE,
  partitionParams,
  stagePartitionSql,
  type DatasetPartition,
  type DatasetPartitionKey,
  type DimensionStream,
} from './dataset.js';
import { releaseInProcess } from './inProcessLock.js';
import { FRAMEWORKS, PROGRAMS, SNAPSHOTS, upsertInventory } from './inventory.js';
import { Slots } from './slots.js';
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

// The dataset export's record of what it wrote (table export_partitions), per dataset folder.
const EXPORTED_LIST = 'SELECT partition, fingerprint FROM export_partitions WHERE dataset_dir = $dir';
const EXPORTED_RECORD = 'INSERT OR REPLACE INTO export_partitions VALUES ($dir, $partition, $fingerprint, $n_rows, $sha256, $exported_at)';
const EXPORTED_FORGET = 'DELETE FROM export_partitions WHERE dataset_dir = $dir AND partition = $partition';

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

  /** Programs the inventory knows in one organization (the collector bounds a scope's pages by it). */
  async inventoryProgramCount(orgId: string): Promise<number> {
    const [row] = await this.query<{ n: bigint | number }>(readSql('src/store/sql/inventory_org_program_count.sql'), { org_id: orgId });
    return Number(row?.n ?? 0);
  }

  /** Frameworks the inventory knows of these programs (the collector bounds a frameworks request's pages by it). */
  async inventoryFrameworkCount(programIds: string[]): Promise<number> {
    const [row] = await this.query<{ n: bigint | number }>(readSql('src/store/sql/inventory_framework_count.sql'), { program_ids: programIds });
    return Number(row?.n ?? 0);
  }

  /** Each program's known frameworks with usage since windowStart (sizes frameworks requests; collect/frameworkBatches.ts). */
  async frameworkCountsByProgram(programIds: string[], windowStart: Date): Promise<Map<string, number>> {
    const rows = await this.query<{ program_id: string; n: bigint }>(readSql('src/store/sql/inventory_framework_count_by_program.sql'), {
      program_ids: programIds,
      window_start: windowStart,
    });
    return new Map(rows.map((r) => [r.program_id, Number(r.n)]));
  }

  /** An organization from the organization listing; a null name keeps the one already known. */
  async upsertOrganization(o: { orgId: string; name: string | null; seenAt: Date }): Promise<void> {
    await this.run(readSql('src/store/sql/organizations_upsert.sql'), { org_id: o.orgId, name: o.name, seen_at: o.seenAt });
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

  // ---- the dataset export's record

  /** The partitions the last exports wrote into the dataset at `dir` (absolute), with their fingerprints. */
  async exportedPartitions(dir: string): Promise<Map<string, string>> {
    const rows = await this.query<{ partition: string; fingerprint: string }>(EXPORTED_LIST, { dir });
    return new Map(rows.map((r) => [r.partition, r.fingerprint]));
  }

  async recordExportedPartition(r: { dir: string; partition: string; fingerprint: string; rows: number; sha256: string; exportedAt: Date }): Promise<void> {
    await this.run(EXPORTED_RECORD, { dir: r.dir, partition: r.partition, fingerprint: r.fingerprint, n_rows: BigInt(r.rows), sha256: r.sha256, exported_at: r.exportedAt });
  }

  /** A partition that no longer has rows. */
  async forgetExportedPartition(dir: string, partition: string): Promise<void> {
    await this.run(EXPORTED_FORGET, { dir, partition });
  }

  /** Every partition of the dataset (see dataset.ts), usage streams first; a dimension is listed even when empty. */
  async datasetPartitions(): Promise<DatasetPartition[]> {
    type Row = { granularity?: string; month?: string; n_rows: bigint; digest: string | null; run_ids: string[] | null };
    const out: DatasetPartition[] = [];
    const add = (stream: DatasetPartition['stream'], r: Row) =>
      out.push({
        stream,
        ...(r.granularity !== undefined ? { granularity: r.granularity } : {}),
        ...(r.month !== undefined ? { month: r.month } : {}),
        rows: r.n_rows, digest: r.digest, runIds: r.run_ids ?? [],
      });
    for (const stream of ['usage_program', 'usage_framework', 'spend_daily'] as const) {
      for (const r of await this.query<Row>(readSql(PARTITIONS_SQL_FILE[stream]))) add(stream, r);
    }
    for (const stream of Object.keys(DIMENSION_PARTITION_SQL) as DimensionStream[]) {
      for (const r of await this.query<Row>(DIMENSION_PARTITION_SQL[stream])) add(stream, r);
    }
    return out;
  }

  /** Stages one partition's rows in the TEMP table STAGED_PARTITION (replacing the previous one). */
  async stageDatasetPartition(p: DatasetPartitionKey): Promise<void> {
    await this.run(stagePartitionSql(p.stream), partitionParams(p));
  }

  /** The staged partition as a Parquet file at `path`. */
  async copyStagedPartition(path: string): Promise<void> {
    await this.run(copyPartitionSql(path));
  }

  async dropStagedPartition(): Promise<void> {
    await this.run(DROP_STAGED_PARTITION);
  }

  /** Rows in the dimension tables, for `status`. */
  async dimensionCounts(): Promise<{ programs: number; frameworks: number; snapshots: number }> {
    const [row] = await this.query<Record<string, bigint | number>>(readSql('src/store/sql/dimension_counts.sql'));
    const n = (k: string) => Number(row?.[k] ?? 0);
    return { programs: n('programs'), frameworks: n('frameworks'), snapshots: n('snapshots') };
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
