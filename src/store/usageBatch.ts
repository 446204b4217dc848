// A usage batch of one window and scope (a source, granularity and organization), on its own
// connection. Two ways in, one way out:
// - appendPage(): a raw consumption page, parsed by DuckDB's JSON reader, checked strictly and staged
//   in the batch's TEMP table (the collector uses this);
// - append(): rows built in JavaScript, staged through the appender (fixtures and tests).
// commit() then replaces the whole window and scope with what was staged, and writes the coverage row,
// in one transaction: a scope becomes visible whole or not at all.
import {
  BIGINT,
  DuckDBDataChunk,
  TIMESTAMPTZ,
  VARCHAR,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBTimestampTZValue,
  type DuckDBValue,
  type DuckDBVector,
} from '@duckdb/node-api';
import { execSql, queryRows } from './connection.js';
import { readSql } from './sql.js';
import type { PageLoaded, PageSource, UsageBatch, UsageBatchSpec, UsageRowIn } from './types.js';
import { firstOffence, type Offence } from './pageCheck.js';
import { timestampTZ } from './values.js';

// Each table's and each source's statements, named literally so that a search for a file finds its caller.
const TABLE_SQL = {
  usage_program: {
    deleteWindow: 'src/store/sql/usage_program_delete_window.sql',
    windowDeletions: 'src/store/sql/usage_program_window_deletions.sql',
  },
  usage_framework: {
    deleteWindow: 'src/store/sql/usage_framework_delete_window.sql',
    windowDeletions: 'src/store/sql/usage_framework_window_deletions.sql',
  },
} as const;
const PAGE_SQL = {
  v1_programs: {
    parse: 'src/store/sql/page_v1_programs.sql',
    check: 'src/store/sql/page_v1_programs_check.sql',
    stage: 'src/store/sql/staging_insert_v1_page.sql',
  },
  v2_programs: {
    parse: 'src/store/sql/page_v2_programs.sql',
    check: 'src/store/sql/page_v2_programs_check.sql',
    stage: 'src/store/sql/staging_insert_v2_programs_page.sql',
  },
  v2_frameworks: {
    parse: 'src/store/sql/page_v2_frameworks.sql',
    check: 'src/store/sql/page_v2_frameworks_check.sql',
    stage: 'src/store/sql/staging_insert_v2_frameworks_page.sql',
  },
} as const;

/** What a batch needs from its store. */
export interface BatchHost {
  connect(): Promise<DuckDBConnection>;
  /** Runs fn with no other write of the store interleaved (see Store.exclusive). */
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  /** Runs fn when one of the store's page slots is free: parsing a page pins about eight times its
   *  size in DuckDB's memory, so only a few are parsed at once, whatever the number of batches. */
  pageSlot<T>(fn: () => Promise<T>): Promise<T>;
  batchClosed(batch: UsageBatch): void;
}

/** A batch was refused; the database is unchanged. */
export class UsageBatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageBatchError';
  }
}

/** A page's content is not what the API documents: the scope is refused, nothing of it written. */
export class PageContentError extends UsageBatchError {
  constructor(readonly offence: Offence) {
    super(`${offence.path}: ${offence.problem}`);
    this.name = 'PageContentError';
  }
}

/** The answer would delete more of the window than allowed: held, nothing written. */
export class DeletionHeldError extends UsageBatchError {
  constructor(
    readonly unseen: number,
    readonly existing: number,
    readonly share: number,
  ) {
    super(
      `the answer would delete ${unseen} of the window's ${existing} stored rows (${Math.round((unseen / existing) * 100)}%, ` +
        `more than the ${Math.round(share * 100)}% allowed by collect.max_deletion_share): held, nothing was changed. ` +
        `If the usage really is gone, re-run with --accept-deletions.`,
    );
    this.name = 'DeletionHeldError';
  }
}

/** What staging_insert_*_page.sql raises (DuckDB's error()) at a metric entry that is not documented. */
const LEAF_REFUSED = 'PAGE_LEAF_REFUSED';

// The columns of staging_usage_create.sql, in order.
const STAGING_TYPES = [VARCHAR, VARCHAR, VARCHAR, VARCHAR, VARCHAR, TIMESTAMPTZ, TIMESTAMPTZ, TIMESTAMPTZ, TIMESTAMPTZ, VARCHAR, BIGINT];
const STAGING_COLUMNS = STAGING_TYPES.length;
// DuckDB's standard vector size: the most rows one data chunk holds.
const CHUNK_ROWS = 2048;
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function describe(row: Record<string, unknown>): string {
  return Object.entries(row)
    .map(([k, v]) => `${k}=${v instanceof Date ? v.toISOString() : v === null ? 'NULL' : String(v)}`)
    .join(' ');
}

/**
 * Fills DuckDB data chunks column by column and hands each full chunk to the appender. Measured
 * faster than the appender's per-value calls: timestamps and values go into typed arrays and cross
 * into DuckDB once per chunk, and repeated timestamps share one value object.
 */
class ChunkWriter {
  private chunk: DuckDBDataChunk | undefined;
  private vectors: DuckDBVector<DuckDBValue>[] = [];
  private row = 0;
  private readonly times = new Map<number, DuckDBTimestampTZValue>();
  private readonly capacity = CHUNK_ROWS;

  constructor(private readonly appender: DuckDBAppender) {}

  private time(d: Date): DuckDBTimestampTZValue {
    const ms = d.getTime();
    let v = this.times.get(ms);
    if (v === undefined) {
      v = timestampTZ(d);
      if (this.times.size > 10_000) this.times.clear();
      this.times.set(ms, v);
    }
    return v;
  }

  private start(): void {
    const chunk = DuckDBDataChunk.create(STAGING_TYPES, this.capacity);
    this.chunk = chunk;
    this.vectors = STAGING_TYPES.map((_, i) => chunk.getColumnVector(i) as DuckDBVector<DuckDBValue>);
    this.row = 0;
  }

  add(r: UsageRowIn): void {
    if (typeof r.value !== 'bigint' || r.value > INT64_MAX || r.value < INT64_MIN) {
      throw new TypeError(
        `usage value must be an int64 bigint, got ${typeof r.value} ${String(r.value)} for ${r.program_id} ${r.metric} ${r.timeframe_start?.toISOString?.()}`,
      );
    }
    if (this.chunk === undefined) this.start();
    const v = this.vectors;
    const i = this.row;
    v[0]!.setItem(i, r.org_id ?? null);
    v[1]!.setItem(i, r.program_id);
    v[2]!.setItem(i, r.framework_id ?? null);
    v[3]!.setItem(i, r.period_id);
    v[4]!.setItem(i, r.period_plan);
    v[5]!.setItem(i, this.time(r.period_start));
    v[6]!.setItem(i, r.period_end === null ? null : this.time(r.period_end));
    v[7]!.setItem(i, this.time(r.timeframe_start));
    v[8]!.setItem(i, this.time(r.timeframe_end));
    v[9]!.setItem(i, r.metric);
    v[10]!.setItem(i, r.value);
    this.row = i + 1;
    if (this.row === this.capacity) this.emit();
  }

  private emit(): void {
    const chunk = this.chunk;
    if (chunk === undefined || this.row === 0) return;
    // flush() copies each column into DuckDB's vectors; a last, shorter chunk is then cut to its rows.
    for (const vec of this.vectors) vec.flush();
    if (this.row < this.capacity) chunk.rowCount = this.row;
    this.appender.appendDataChunk(chunk);
    this.chunk = undefined;
    this.vectors = [];
    this.row = 0;
  }

  finish(): void {
    this.emit();
  }
}

export class StagedUsageBatch implements UsageBatch {
  private conn: DuckDBConnection | undefined;
  private appender: DuckDBAppender | undefined;
  private opening: Promise<void> | undefined;
  private state: 'open' | 'committing' | 'closed' = 'open';
  private staged = 0;
  private committing: Promise<unknown> | undefined;
  /** The last page staged or being staged: pages share the batch's TEMP `page` table, so one at a time. */
  private pages: Promise<unknown> = Promise.resolve();
  private readonly isFramework: boolean;
  /** 'rows': staged through append(); 'pages': raw pages through appendPage(). Both commit whole. */
  private mode: 'rows' | 'pages' | undefined;
  private refused = false;

  constructor(
    private readonly host: BatchHost,
    readonly spec: UsageBatchSpec,
  ) {
    this.isFramework = spec.table === 'usage_framework';
    if (spec.table !== 'usage_program' && spec.table !== 'usage_framework') throw new Error(`unknown usage table ${String(spec.table)}`);
    if (this.isFramework && spec.apiVersion !== undefined) throw new Error('apiVersion applies to usage_program only');
    if (!(spec.windowStart.getTime() < spec.windowEnd.getTime())) {
      throw new Error(`empty or inverted window [${spec.windowStart.toISOString()}, ${spec.windowEnd.toISOString()})`);
    }
    if (spec.scope.programIds !== undefined && spec.scope.programIds.length === 0) {
      throw new Error('scope.programIds is empty: omit it to mean every program');
    }
  }

  get stagedRows(): number {
    return this.staged;
  }

  private async open(): Promise<void> {
    this.opening ??= (async () => {
      const conn = await this.host.connect();
      try {
        await execSql(conn, readSql('src/store/sql/staging_usage_create.sql'));
        await execSql(conn, readSql('src/store/sql/seen_ids_create.sql'));
        await execSql(conn, readSql('src/store/sql/page_check_macros.sql'));
        this.conn = conn;
      } catch (err) {
        conn.closeSync();
        throw err;
      }
    })();
    return this.opening;
  }

  private async openAppender(): Promise<DuckDBAppender> {
    await this.open();
    if (!this.appender) {
      const appender = await this.conn!.createAppender('staging_usage', 'main', 'temp');
      if (appender.columnCount !== STAGING_COLUMNS) throw new Error('staging_usage does not have the columns the appender writes');
      this.appender = appender;
    }
    return this.appender;
  }

  async appendPage(source: PageSource, json: string): Promise<PageLoaded> {
    const run = this.pages.then(() => this.loadPage(source, json));
    // A refused page spoils the scope: commit() then refuses too, so it is never written in part.
    this.pages = run.catch(() => {
      this.refused = true;
    });
    return run;
  }

  private setMode(mode: 'rows' | 'pages'): void {
    if (this.mode !== undefined && this.mode !== mode) throw new Error('a usage batch takes either append() or appendPage(), not both');
    this.mode = mode;
  }

  /**
   * One page: parsed with every leaf kept as raw JSON, checked strictly (page_*_check.sql: a value that
   * is not a non-negative int64 integer, an id or time missing or malformed, refuses the page whole,
   * naming the first offending path), then converted into the batch's staging table. Nothing is
   * written to the usage tables until commit(): a scope's pages become visible together or not at all.
   * The staging table is DuckDB's (spilling to disk beyond memory_limit), never the JavaScript heap.
   */
  private async loadPage(source: PageSource, json: string): Promise<PageLoaded> {
    if (this.state !== 'open') throw new Error(`cannot append to a usage batch that is ${this.state === 'closed' ? 'closed' : 'committing'}`);
    if ((source === 'v2_frameworks') !== this.isFramework) throw new Error(`a ${source} page does not belong in a ${this.spec.table} batch`);
    this.setMode('pages');
    await this.open();
    const conn = this.conn!;
    return this.host.pageSlot(async () => {
      await execSql(conn, readSql(PAGE_SQL[source].parse), { json });
      const [check] = await queryRows<{ bad: bigint | number | null }>(conn, readSql(PAGE_SQL[source].check));
      if (Number(check?.bad ?? 0) > 0) {
        const found = firstOffence(source, json);
        throw new PageContentError(found ?? { path: '$', problem: 'the page does not have the documented shape' });
      }
      const [summary] = await queryRows<{ items: bigint | number | null; cursor: string | null; program_ids: string[] | null }>(
        conn,
        readSql('src/store/sql/page_summary.sql'),
      );
      const items = summary?.items === null || summary?.items === undefined ? null : Number(summary.items);
      let rows = 0;
      if (items !== null && items > 0) {
        rows = await execSql(conn, readSql(PAGE_SQL[source].stage), { org_id: this.spec.scope.orgId ?? null }).catch((err: unknown) => {
          // The insert checks the metric entries as it converts them; the offending path is found here.
          if (!String((err as Error).message).includes(LEAF_REFUSED)) throw err;
          throw new PageContentError(firstOffence(source, json) ?? { path: '$', problem: 'a metric entry is not a name and a counter' });
        });
        await execSql(conn, readSql(this.isFramework ? 'src/store/sql/page_framework_ids.sql' : 'src/store/sql/page_ids.sql'));
        if (!this.isFramework && this.spec.scope.orgId !== undefined) await this.checkOrg(conn, this.spec.scope.orgId);
        await execSql(conn, readSql('src/store/sql/seen_ids_add.sql'));
      }
      this.staged += rows;
      return { items, cursor: summary?.cursor ?? null, programIds: summary?.program_ids ?? [], rows };
    });
  }

  /** A program the inventory places in another organization does not belong in this scope's answer. */
  private async checkOrg(conn: DuckDBConnection, orgId: string): Promise<void> {
    const [stray] = await queryRows<{ id: string; org_id: string }>(conn, readSql('src/store/sql/page_ids_other_org.sql'), { org_id: orgId });
    if (stray) {
      throw new UsageBatchError(
        `the answer holds program ${stray.id}, which the inventory places in organization ${stray.org_id}, not ${orgId}: ` +
          `refused, nothing of this scope was changed`,
      );
    }
  }

  /** Rows the window and scope hold now, and how many of them no page returned (the replacement deletes those). */
  private async deletions(conn: DuckDBConnection, table: keyof typeof TABLE_SQL): Promise<{ existing: number; unseen: number }> {
    const [r] = await queryRows<{ existing: bigint; unseen: bigint }>(conn, readSql(TABLE_SQL[table].windowDeletions), {
      ...this.windowParams(),
      ...this.scopeParams(),
    });
    return { existing: Number(r?.existing ?? 0), unseen: Number(r?.unseen ?? 0) };
  }

  /** BEGIN … COMMIT on the batch's connection, inside the store's exclusive section. */
  private inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
    return this.host.exclusive(async () => {
      await execSql(conn, 'BEGIN TRANSACTION');
      try {
        const out = await fn();
        await execSql(conn, 'COMMIT');
        return out;
      } catch (err) {
        await execSql(conn, 'ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  private windowParams(): Record<string, unknown> {
    const spec = this.spec;
    return {
      ...(this.isFramework ? {} : { api_version: spec.apiVersion ?? 'v2' }),
      granularity: spec.granularity,
      window_start: spec.windowStart,
      window_end: spec.windowEnd,
    };
  }

  private insertStaged(conn: DuckDBConnection): Promise<number> {
    const spec = this.spec;
    return this.isFramework
      ? execSql(conn, readSql('src/store/sql/usage_framework_insert_staged.sql'), {
          granularity: spec.granularity,
          run_id: spec.runId,
          collected_at: spec.collectedAt,
        })
      : execSql(conn, readSql('src/store/sql/usage_program_insert_staged.sql'), {
          api_version: spec.apiVersion ?? 'v2',
          granularity: spec.granularity,
          run_id: spec.runId,
          collected_at: spec.collectedAt,
        });
  }

  private async writeCoverage(conn: DuckDBConnection, rows: number): Promise<void> {
    const spec = this.spec;
    const coverageKey = {
      source: spec.coverage.source,
      granularity: spec.granularity,
      scope: spec.coverage.scope,
      window_start: spec.windowStart,
      window_end: spec.windowEnd,
    };
    await execSql(conn, readSql('src/store/sql/coverage_delete_same.sql'), coverageKey);
    await execSql(conn, readSql('src/store/sql/coverage_insert.sql'), {
      ...coverageKey,
      status: spec.coverage.status,
      rows: BigInt(rows),
      run_id: spec.runId,
      collected_at: spec.collectedAt,
      detail: null,
    });
  }

  async append(rows: Iterable<UsageRowIn>): Promise<void> {
    if (this.state !== 'open') throw new Error(`cannot append to a usage batch that is ${this.state === 'closed' ? 'closed' : 'committing'}`);
    this.setMode('rows');
    const appender = await this.openAppender();
    let n = 0;
    try {
      const chunk = new ChunkWriter(appender);
      for (const r of rows) {
        chunk.add(r);
        n++;
      }
      chunk.finish();
      // Flushing per call checks the staging constraints (NOT NULL) while the page is still known.
      appender.flushSync();
    } catch (err) {
      // A half-appended page cannot be taken back from the appender: the batch is unusable.
      await this.abort();
      throw err;
    }
    this.staged += n;
  }

  private scopeParams(): Record<string, unknown> {
    const { orgId, programIds } = this.spec.scope;
    return {
      window_start: this.spec.windowStart,
      window_end: this.spec.windowEnd,
      by_org: orgId !== undefined,
      org_id: orgId ?? null,
      by_programs: programIds !== undefined,
      program_ids: [...(programIds ?? [])],
    };
  }

  private async check(conn: DuckDBConnection): Promise<void> {
    const dupSql = this.isFramework
      ? 'src/store/sql/staging_usage_duplicate_framework.sql'
      : 'src/store/sql/staging_usage_duplicate_program.sql';
    const [dup] = await queryRows(conn, readSql(dupSql));
    if (dup) {
      throw new UsageBatchError(
        `${this.spec.table} batch refused, nothing was written: the key ${describe(dup)} appears more than once ` +
          `(window ${this.spec.windowStart.toISOString()}..${this.spec.windowEnd.toISOString()}, scope ${this.spec.coverage.scope})`,
      );
    }
    const [outside] = await queryRows(conn, readSql('src/store/sql/staging_usage_outside.sql'), {
      ...this.scopeParams(),
      needs_framework: this.isFramework,
    });
    if (outside) {
      throw new UsageBatchError(
        `${this.spec.table} batch refused, nothing was written: the row ${describe(outside)} is outside the batch's ` +
          `window [${this.spec.windowStart.toISOString()}, ${this.spec.windowEnd.toISOString()}) or scope ` +
          `${JSON.stringify(this.spec.scope)}${this.isFramework ? ' (or has no framework_id)' : ''}`,
      );
    }
  }

  /**
   * An answer that would delete more than the allowed share of the window's rows (an empty list where
   * there was data, say) is more likely a fault of the API than a fact: held, unless the spec allows it.
   */
  private async holdDeletions(conn: DuckDBConnection): Promise<void> {
    const share = this.spec.maxDeletionShare;
    if (share === undefined || share >= 1) return;
    const { existing, unseen } = await this.deletions(conn, this.isFramework ? 'usage_framework' : 'usage_program');
    if (existing === 0 || unseen / existing <= share) return;
    throw new DeletionHeldError(unseen, existing, share);
  }

  async commit(): Promise<{ rows: number }> {
    if (this.state !== 'open') throw new Error(`cannot commit a usage batch that is ${this.state === 'closed' ? 'closed' : 'committing'}`);
    this.state = 'committing';
    const done = this.commitStaged();
    this.committing = done;
    return done;
  }

  private async commitStaged(): Promise<{ rows: number }> {
    try {
      await this.pages;
      await this.open();
      const conn = this.conn!;
      this.appender?.closeSync();
      this.appender = undefined;
      if (this.refused) throw new UsageBatchError(`${this.spec.table} batch refused, nothing was written: one of its pages was refused`);
      if (this.mode === 'pages') await this.holdDeletions(conn);
      await this.check(conn);
      // One transaction for the whole scope: whatever its pages were, they replace the window together.
      const rows = await this.inTransaction(conn, async () => {
        const table = this.isFramework ? 'usage_framework' : 'usage_program';
        await execSql(conn, readSql(TABLE_SQL[table].deleteWindow), { ...this.windowParams(), ...this.scopeParams() });
        const inserted = await this.insertStaged(conn);
        await this.writeCoverage(conn, inserted);
        return inserted;
      });
      return { rows };
    } finally {
      await this.close();
    }
  }

  async abort(): Promise<void> {
    // A commit under way is not interrupted: it ends in its own COMMIT or ROLLBACK.
    if (this.committing) {
      await this.committing.catch(() => {});
      return;
    }
    await this.close();
  }

  private async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    await this.opening?.catch(() => {});
    await this.pages;
    try {
      this.appender?.closeSync();
    } catch {
      // The appender may hold a row that failed; its data is dropped with the TEMP table anyway.
    }
    this.appender = undefined;
    if (this.conn) {
      await execSql(this.conn, readSql('src/store/sql/staging_usage_drop.sql')).catch(() => {});
      this.conn.closeSync();
      this.conn = undefined;
    }
    this.host.batchClosed(this);
  }
}
