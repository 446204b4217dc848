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
import { COVERAGE_DELETE_SAME_FAILED_SQL, COVERAGE_DELETE_SAME_SQL, COVERAGE_INSERT_SQL } from './coverageSql.js';

// Parameters: $source VARCHAR, $granularity VARCHAR, $by_scope BOOLEAN, $scope VARCHAR. The end
// (exclusive) of the latest complete window, for one scope or across all scopes.
const COVERAGE_LATEST_COMPLETE_END_SQL = `
SELECT max(window_end) AS window_end
FROM coverage
WHERE source = $source AND granularity = $granularity AND status = 'complete'
  AND (NOT $by_scope OR scope = $scope);`;

// Rows in the dimension tables, for status. Parameters: none.
const DIMENSION_COUNTS_SQL = `
SELECT (SELECT count(*) FROM programs) AS programs,
       (SELECT count(*) FROM frameworks) AS frameworks,
       (SELECT count(*) FROM snapshots) AS snapshots;`;

// How many frameworks the inventory knows for each of the given programs: all of them (`known`, which
// bounds a frameworks request's page count) and those a window starting at $window_start could list
// (`listable`: those deleted before it are not), by which the collector sizes its frameworks requests so
// that a request's last page is not exactly full. One query per programs page serves both (a count per
// frameworks request cost a query each). Parameters: $program_ids VARCHAR[], $window_start TIMESTAMPTZ.
// Programs with none known have no row.
const INVENTORY_FRAMEWORK_COUNT_BY_PROGRAM_SQL = `
SELECT program_id, count(*) AS known, count(*) FILTER (WHERE deleted_at IS NULL OR deleted_at > $window_start) AS listable
FROM frameworks
WHERE program_id IN (SELECT unnest($program_ids::VARCHAR[]))
GROUP BY program_id;`;

// How many programs the inventory knows in one organization; the collector bounds a scope's page count
// by it. Parameters: $org_id VARCHAR.
const INVENTORY_ORG_PROGRAM_COUNT_SQL = `
SELECT count(*) AS n FROM programs WHERE org_id = $org_id;`;

// No parameters. Live programs the inventory knows: what a full programs listing would page through,
// against which asking for a few unknown programs by id is weighed.
const INVENTORY_PROGRAM_TOTAL_SQL = `
SELECT count(*) AS n FROM programs WHERE deleted_at IS NULL;`;

// Parameters: $program_ids VARCHAR[], $updated_ats VARCHAR[] (ISO date-times or NULL, same order). The
// updated_at each program had in the programs listing.
const INVENTORY_PROGRAM_UPDATED_SQL = `
INSERT INTO inventory_program_updated (program_id, api_updated_at)
SELECT p.id, CAST(u.at AS TIMESTAMPTZ)
FROM (SELECT unnest($program_ids) AS id, generate_subscripts($program_ids, 1) AS i) p
JOIN (SELECT unnest($updated_ats) AS at, generate_subscripts($updated_ats, 1) AS i) u USING (i)
ON CONFLICT (program_id) DO UPDATE SET api_updated_at = excluded.api_updated_at;`;

// Parameters: $program_ids VARCHAR[], $kind VARCHAR, $listed_at TIMESTAMPTZ. Those programs' listings
// of that kind were committed now, as of the updated_at the programs listing gave.
const INVENTORY_PROGRAMS_LISTED_SQL = `
INSERT INTO inventory_listing_state (program_id, kind, listed_at, listed_updated_at)
SELECT p.id, $kind, $listed_at, pu.api_updated_at
FROM (SELECT unnest($program_ids) AS id) p
LEFT JOIN inventory_program_updated pu ON pu.program_id = p.id
ON CONFLICT (program_id, kind) DO UPDATE SET listed_at = excluded.listed_at, listed_updated_at = excluded.listed_updated_at;`;

// Parameters: $kind VARCHAR ('program' | 'framework'), $ids VARCHAR[], $at TIMESTAMPTZ.
const INVENTORY_SOUGHT_ADD_SQL = `
INSERT INTO inventory_sought (kind, id, sought_at)
SELECT $kind, unnest($ids), $at
ON CONFLICT (kind, id) DO NOTHING;`;

// Parameters: $key VARCHAR. One value of the inventory's progress (no row: not set).
const INVENTORY_STATE_GET_SQL = `
SELECT value FROM inventory_state WHERE key = $key;`;

// Parameters: $key VARCHAR, $value VARCHAR (NULL clears it).
const INVENTORY_STATE_SET_SQL = `
INSERT INTO inventory_state (key, value) VALUES ($key, $value)
ON CONFLICT (key) DO UPDATE SET value = excluded.value;`;

// Parameters: $program_ids VARCHAR[]. Frameworks of these programs that consumption named and the
// listing just made still does not: recorded as looked for, so they do not trigger another listing.
const INVENTORY_UNNAMED_FRAMEWORKS_SQL = `
SELECT DISTINCT u.framework_id
FROM usage_framework u
LEFT JOIN frameworks f USING (framework_id)
WHERE u.program_id IN (SELECT unnest($program_ids)) AND f.framework_id IS NULL;`;

// (the organization listing of a collection) Parameters: $org_id VARCHAR, $name VARCHAR (NULL when the
// listing gave none), $seen_at TIMESTAMPTZ.
const ORGANIZATIONS_UPSERT_SQL = `
INSERT INTO organizations (org_id, name, last_seen_at) VALUES ($org_id, $name, $seen_at)
ON CONFLICT (org_id) DO UPDATE SET name = coalesce(excluded.name, organizations.name), last_seen_at = excluded.last_seen_at;`;

// Parameters: $seen_at TIMESTAMPTZ (start of the completed listing), $org_ids VARCHAR[]. After a
// programs listing paged to its end (possibly over several runs), a program of those organizations it
// did not return keeps its row, marked deleted as of that listing.
const PROGRAMS_MARK_UNSEEN_SQL = `
UPDATE programs
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE org_id IN (SELECT unnest($org_ids))
  AND deleted_at IS NULL
  AND last_seen_at < $seen_at;`;

// Parameters: $run_id VARCHAR, $finished_at TIMESTAMPTZ, $status VARCHAR, $requests BIGINT, $retries
// BIGINT, $throttled BIGINT, $pages BIGINT, $rows_loaded BIGINT, $error VARCHAR, $inventory_requests
// BIGINT.
const RUN_FINISH_SQL = `
UPDATE collection_runs
SET finished_at = $finished_at, status = $status, requests = $requests, retries = $retries,
    throttled = $throttled, pages = $pages, rows_loaded = $rows_loaded, error = $error,
    inventory_requests = $inventory_requests
WHERE run_id = $run_id;`;

// Parameters: $run_id VARCHAR, $command VARCHAR, $started_at TIMESTAMPTZ, $options VARCHAR (JSON, no
// secrets).
const RUN_START_SQL = `
INSERT INTO collection_runs (run_id, command, started_at, status, options)
VALUES ($run_id, $command, $started_at, 'running', $options);`;

// Parameters: $n INTEGER. The most recent collection runs, newest first.
const RUNS_LAST_SQL = `
SELECT run_id, command, started_at, finished_at, status, requests, retries, throttled, pages,
       rows_loaded, error, options, inventory_requests
FROM collection_runs
ORDER BY started_at DESC, run_id DESC
LIMIT $n;`;

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
   * Parameters: Date binds as TIMESTAMPTZ, bigint as BIGINT, arrays as lists; named ($name) from an object.
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
    await this.run(RUN_START_SQL, {
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
      execSql(this.conn, RUN_FINISH_SQL, {
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
    const [row] = await this.query<{ value: string | null }>(INVENTORY_STATE_GET_SQL, { key });
    return row?.value ?? null;
  }

  async setInventoryState(key: string, value: string | null): Promise<void> {
    await this.run(INVENTORY_STATE_SET_SQL, { key, value });
  }

  /** One page of the programs listing: the programs (not marking anything deleted) and their updated_at. */
  async recordProgramsPage(rows: (ProgramRow & { updated_at: Date | null })[], o: { seenAt: Date; cursorKey?: string; cursor?: string | null }): Promise<void> {
    await this.upsertPrograms(rows, { seenAt: o.seenAt });
    await this.transaction(async () => {
      if (rows.length > 0) {
        await execSql(this.conn, INVENTORY_PROGRAM_UPDATED_SQL, {
          program_ids: rows.map((r) => r.program_id),
          updated_ats: rows.map((r) => (r.updated_at ? r.updated_at.toISOString() : null)),
        });
      }
      if (o.cursorKey !== undefined) await execSql(this.conn, INVENTORY_STATE_SET_SQL, { key: o.cursorKey, value: o.cursor ?? null });
    });
  }

  /** The programs listing reached its end: programs of these organizations it did not return are marked deleted. */
  async markProgramsUnseen(orgIds: string[], listingStartedAt: Date): Promise<void> {
    if (orgIds.length === 0) return;
    await this.run(PROGRAMS_MARK_UNSEEN_SQL, { seen_at: listingStartedAt, org_ids: orgIds });
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
    const [row] = await this.query<{ n: bigint | number }>(INVENTORY_PROGRAM_TOTAL_SQL);
    return Number(row?.n ?? 0);
  }

  /** Programs the inventory knows in one organization (the collector bounds a scope's pages by it). */
  async inventoryProgramCount(orgId: string): Promise<number> {
    const [row] = await this.query<{ n: bigint | number }>(INVENTORY_ORG_PROGRAM_COUNT_SQL, { org_id: orgId });
    return Number(row?.n ?? 0);
  }

  /** Each program's known frameworks, all of them and those with usage since windowStart (the collector
   *  bounds a frameworks request's pages by the first, sizes its requests by the second; collect/frameworkBatches.ts). */
  async frameworkCountsByProgram(programIds: string[], windowStart: Date): Promise<Map<string, { known: number; listable: number }>> {
    const rows = await this.query<{ program_id: string; known: bigint; listable: bigint }>(INVENTORY_FRAMEWORK_COUNT_BY_PROGRAM_SQL, {
      program_ids: programIds,
      window_start: windowStart,
    });
    return new Map(rows.map((r) => [r.program_id, { known: Number(r.known), listable: Number(r.listable) }]));
  }

  /** An organization from the organization listing; a null name keeps the one already known. */
  async upsertOrganization(o: { orgId: string; name: string | null; seenAt: Date }): Promise<void> {
    await this.run(ORGANIZATIONS_UPSERT_SQL, { org_id: o.orgId, name: o.name, seen_at: o.seenAt });
  }

  async unknownProgramsInRun(runId: string): Promise<string[]> {
    const rows = await this.query<{ program_id: string }>(readSql('src/store/sql/inventory_unknown_programs.sql'), { run_id: runId });
    return rows.map((r) => r.program_id);
  }

  async markSought(kind: 'program' | 'framework', ids: string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.run(INVENTORY_SOUGHT_ADD_SQL, { kind, ids, at });
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
      const unnamed = await this.query<{ framework_id: string }>(INVENTORY_UNNAMED_FRAMEWORKS_SQL, { program_ids: o.frameworksOf });
      await this.transaction(async () => {
        await execSql(this.conn, INVENTORY_PROGRAMS_LISTED_SQL, { program_ids: o.frameworksOf, kind: 'frameworks', listed_at: o.listedAt });
        if (unnamed.length > 0) {
          await execSql(this.conn, INVENTORY_SOUGHT_ADD_SQL, { kind: 'framework', ids: unnamed.map((r) => r.framework_id), at: o.listedAt });
        }
      });
    }
    if (o.snapshotsOf.length > 0) {
      await this.upsertSnapshots(o.snapshots, { seenAt: o.listedAt, completeForPrograms: o.snapshotsOf });
      await this.run(INVENTORY_PROGRAMS_LISTED_SQL, { program_ids: o.snapshotsOf, kind: 'snapshots', listed_at: o.listedAt });
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
        unsuccessful ? COVERAGE_DELETE_SAME_FAILED_SQL : COVERAGE_DELETE_SAME_SQL,
        key,
      );
      await execSql(this.conn, COVERAGE_INSERT_SQL, {
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
    const [row] = await this.query<{ window_end: Date | null }>(COVERAGE_LATEST_COMPLETE_END_SQL, {
      source,
      granularity,
      by_scope: scope !== undefined,
      scope: scope ?? null,
    });
    return row?.window_end ?? null;
  }

  async lastRuns(n: number): Promise<RunRow[]> {
    const rows = await this.query(RUNS_LAST_SQL, { n });
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
    const [row] = await this.query<Record<string, bigint | number>>(DIMENSION_COUNTS_SQL);
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
