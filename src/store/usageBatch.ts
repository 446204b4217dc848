// A usage batch of one window and scope (a source, granularity and organization), on its own
// connection. One way in for what the collector loads, one way out:
// - appendPage(): a raw consumption page, read and checked strictly in JavaScript (page/readPage.ts) and
//   appended as wide bucket rows into the batch's TEMP staging table. It is appendRead() with readPage as
//   the reader: the one loading path, which the test kit's long-row loader (test/support/rowLoader.ts) also
//   takes, with its own reader of fixture rows in place of readPage.
// commit() then replaces the whole window and scope with what was staged, and writes the coverage row,
// in one transaction: a scope becomes visible whole or not at all. The batch's refusals are in
// usageBatchErrors.ts.
import { DuckDBTimestampTZValue, type DuckDBConnection } from '@duckdb/node-api';
import { execSql, queryRows } from './connection.js';
import { readSql } from './sql.js';
import type { PageLoaded, PageSource, UsageBatch, UsageBatchSpec } from './types.js';
import { DeletionHeldError, PageContentError, UsageBatchError } from './usageBatchErrors.js';
import type { PageRows } from '../page/pageRows.js';
import { PageShapeError, readPage } from '../page/readPage.js';
import type { PageReader } from '../page/pageReader.js';
import { PeriodBook } from './periodBook.js';
import { ITEM_COLUMNS, STAGING_COLUMNS, WideChunkWriter, writePage, type PageRead } from './wideChunkWriter.js';
import { writeCoverageRow } from './coverageSql.js';
import { ROW_COUNT_ADD_SQL } from './rowCounts.js';
import { bucketParts, MARK_PARTS_DIRTY_SQL } from './analystParts.js';

// One program of the batch's answer (a staged row's, or one its pages returned without a row) that the
// inventory places in another organization than the batch's, if any: such an answer does not belong in
// the scope. Checked once at commit (it was a query per page). Parameters: $rowless VARCHAR[], $org_id VARCHAR.
const ANSWER_IDS_OTHER_ORG_SQL = `
SELECT i.program_id AS id, i.org_id
FROM programs i
WHERE i.program_id IN (SELECT program_id FROM staging_items UNION ALL SELECT unnest($rowless::VARCHAR[]))
  AND i.org_id IS NOT NULL AND i.org_id <> $org_id
ORDER BY i.program_id
LIMIT 1;`;

// Records in seen_ids the ids the batch's pages returned without a bucket row, so that the deletion guard
// at commit (usage_*_window_deletions.sql) knows every id the fetch returned; those with rows are taken
// from staging (below), not bound one by one. Parameters: $ids VARCHAR[].
const SEEN_IDS_ADD_SQL = `
INSERT INTO seen_ids SELECT DISTINCT unnest($ids::VARCHAR[]) AS id;`;

// The ids of the batch's staged rows, into seen_ids. Parameters: none.
const SEEN_PROGRAM_IDS_FROM_STAGING_SQL = `
INSERT INTO seen_ids SELECT DISTINCT program_id FROM staging_items;`;
const SEEN_FRAMEWORK_IDS_FROM_STAGING_SQL = `
INSERT INTO seen_ids SELECT DISTINCT framework_id FROM staging_items WHERE framework_id IS NOT NULL;`;

// The ids (programs, or frameworks) a page-loaded batch has replaced so far. Parameters: none. TEMP, on
// the batch's own connection.
const SEEN_IDS_CREATE_SQL = `
CREATE OR REPLACE TEMP TABLE seen_ids (id VARCHAR);`;

// Parameters: none. Drops a batch's staging tables.
const STAGING_USAGE_DROP_SQL = `
DROP VIEW IF EXISTS temp.main.staging_usage;
DROP TABLE IF EXISTS temp.main.staging_rows;
DROP TABLE IF EXISTS temp.main.staging_items;
DROP TABLE IF EXISTS temp.main.staging_periods;
DROP TABLE IF EXISTS temp.main.seen_ids;`;

// Parameters: $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end TIMESTAMPTZ (exclusive),
// $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids VARCHAR[]. Removes exactly the
// bucket rows a re-collected window and scope replaces (whatever their period).
const USAGE_FRAMEWORK_DELETE_WINDOW_SQL = `
DELETE FROM usage_framework_buckets
WHERE granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)));`;

// Parameters: $api_version VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ, $window_end
// TIMESTAMPTZ (exclusive), $by_org BOOLEAN, $org_id VARCHAR, $by_programs BOOLEAN, $program_ids
// VARCHAR[]. Removes exactly the bucket rows a re-collected window and scope replaces (whatever their
// period).
const USAGE_PROGRAM_DELETE_WINDOW_SQL = `
DELETE FROM usage_program_buckets
WHERE api_version = $api_version
  AND granularity = $granularity
  AND timeframe_start >= $window_start AND timeframe_start < $window_end
  AND (NOT $by_org OR org_id = $org_id)
  AND (NOT $by_programs OR program_id IN (SELECT unnest($program_ids)));`;

// Each table's statements, a closed set (no table name is ever built into SQL); the files named
// literally so that a search for a file finds its caller.
const TABLE_SQL = {
  usage_program: {
    deleteWindowSql: USAGE_PROGRAM_DELETE_WINDOW_SQL,
    seenFromStagingSql: SEEN_PROGRAM_IDS_FROM_STAGING_SQL,
    windowDeletionsFile: 'src/store/sql/usage_program_window_deletions.sql',
  },
  usage_framework: {
    deleteWindowSql: USAGE_FRAMEWORK_DELETE_WINDOW_SQL,
    seenFromStagingSql: SEEN_FRAMEWORK_IDS_FROM_STAGING_SQL,
    windowDeletionsFile: 'src/store/sql/usage_framework_window_deletions.sql',
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
  /** Runs fn holding every page slot: no page is parsed into any batch while fn runs. */
  allPageSlots<T>(fn: () => Promise<T>): Promise<T>;
  /** Hands the memory DuckDB's allocator and the C library keep after a page or a commit back to the system. */
  releaseMemory(conn: DuckDBConnection): Promise<void>;
  /** Runs fn, a commit's transaction, with the store's threads raised to COMMIT_THREADS if fewer. */
  onCommitThreads<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T>;
  batchClosed(batch: UsageBatch): void;
}

function describe(row: Record<string, unknown>): string {
  return Object.entries(row)
    .map(([k, v]) => `${k}=${v instanceof Date ? v.toISOString() : v === null ? 'NULL' : String(v)}`)
    .join(' ');
}

export class StagedUsageBatch implements UsageBatch {
  private conn: DuckDBConnection | undefined;
  /** The batch's one chunk writer (a refused page spoils the batch, so its leftovers are never appended). */
  private writer: WideChunkWriter | undefined;
  private opening: Promise<void> | undefined;
  private state: 'open' | 'committing' | 'closed' = 'open';
  private staged = 0;
  private committing: Promise<unknown> | undefined;
  /** The last page staged or being staged: pages share the batch's appender, so one at a time. */
  private pages: Promise<unknown> = Promise.resolve();
  private readonly isFramework: boolean;
  private refused = false;
  /** The batch's plan periods and parsed times (staging_periods). */
  private readonly book = new PeriodBook();
  /** Ids (programs, or frameworks) the batch's pages returned without a row (the others are in staging). */
  private readonly rowless = new Set<string>();

  constructor(
    private readonly host: BatchHost,
    readonly spec: UsageBatchSpec,
  ) {
    this.isFramework = spec.table === 'usage_framework';
    if (spec.table !== 'usage_program' && spec.table !== 'usage_framework')
      throw new Error(`unknown usage table ${String(spec.table)}`);
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
        await execSql(conn, SEEN_IDS_CREATE_SQL);
        this.conn = conn;
      } catch (err) {
        conn.closeSync();
        throw err;
      }
    })();
    return this.opening;
  }

  private async openWriter(): Promise<WideChunkWriter> {
    await this.open();
    if (!this.writer) {
      const rows = await this.conn!.createAppender('staging_rows', 'main', 'temp');
      const items = await this.conn!.createAppender('staging_items', 'main', 'temp');
      if (rows.columnCount !== STAGING_COLUMNS || items.columnCount !== ITEM_COLUMNS)
        throw new Error('the staging tables do not have the columns the writer appends');
      this.writer = new WideChunkWriter(rows, items, this.book);
    }
    return this.writer;
  }

  /** read(), then stage(). */
  appendPage(source: PageSource, page: Buffer | string): Promise<PageLoaded> {
    let rows: PageRows;
    try {
      rows = this.read(source, page);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.stage(source, rows);
  }

  /**
   * One page read strictly into its rows (page/readPage.ts: a value that is not a non-negative int64 integer,
   * an id or time missing or malformed, refuses the page whole with a PageContentError naming the first
   * offending path, and spoils the batch). Nothing is staged yet: the caller learns the page's cursor
   * and items at once, and may ask for the next page while this one waits for stage().
   */
  read(source: PageSource, page: Buffer | string): PageRows {
    try {
      return readPage(source, page);
    } catch (err) {
      this.refused = true;
      if (err instanceof PageShapeError) throw new PageContentError(err.offence);
      throw err;
    }
  }

  /** read() on `reader`'s worker thread (page/pageReader.ts): the same rows or the same refusal. */
  async readOn(reader: PageReader, source: PageSource, page: Buffer): Promise<PageRows> {
    try {
      return await reader.read(source, page);
    } catch (err) {
      this.refused = true;
      if (err instanceof PageShapeError) throw new PageContentError(err.offence);
      throw err;
    }
  }

  /** Stages a page's rows, after every page staged before it. */
  stage(source: PageSource, rows: PageRows): Promise<PageLoaded> {
    const orgId = this.spec.scope.orgId ?? null;
    return this.appendRead(source, (writer, book) => writePage(rows, orgId, book, writer));
  }

  /**
   * Stages what `read` hands to the writer, as one page of `source`. Nothing is written to the usage
   * tables until commit(): a scope's pages become visible together or not at all. A page whose reader
   * throws spoils the batch (rows it wrote cannot be taken back from the appender): commit() then
   * refuses, so the scope is never written in part. The staging table is DuckDB's (spilling to disk
   * beyond memory_limit); a page's JavaScript objects live only while it is read.
   */
  appendRead(source: PageSource, read: (writer: WideChunkWriter, book: PeriodBook) => PageRead): Promise<PageLoaded> {
    const run = this.pages.then(() => this.loadPage(source, read));
    this.pages = run.catch(() => {
      this.refused = true;
    });
    return run;
  }

  private async loadPage(
    source: PageSource,
    reader: (writer: WideChunkWriter, book: PeriodBook) => PageRead,
  ): Promise<PageLoaded> {
    if (this.state !== 'open')
      throw new Error(`cannot append to a usage batch that is ${this.state === 'closed' ? 'closed' : 'committing'}`);
    if ((source === 'v2_frameworks') !== this.isFramework)
      throw new Error(`a ${source} page does not belong in a ${this.spec.table} batch`);
    const writer = await this.openWriter();
    return this.host.pageSlot(async () => {
      let read;
      try {
        read = reader(writer, this.book);
        // The appenders keep what they were given (outside DuckDB's memory_limit) until they flush; flushed
        // here, a batch holds no more than the page in flight outside its staging tables.
        writer.flush();
      } catch (err) {
        if (err instanceof PageShapeError) throw new PageContentError(err.offence);
        throw err;
      }
      await this.host.releaseMemory(this.conn!);
      for (const id of read.rowlessIds) this.rowless.add(id);
      this.staged += read.values;
      return { items: read.items, cursor: read.cursor, programIds: read.programIds, rows: read.values };
    });
  }

  /** Writes the periods first seen since the last call into staging_periods. */
  private async flushPeriods(conn: DuckDBConnection): Promise<void> {
    const fresh = this.book.fresh;
    if (fresh.length === 0) return;
    this.book.fresh = [];
    const appender = await conn.createAppender('staging_periods', 'main', 'temp');
    try {
      for (const p of fresh) {
        appender.appendInteger(p.local);
        appender.appendVarchar(p.id);
        appender.appendVarchar(p.plan);
        appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(p.start)));
        if (p.end === null) appender.appendNull();
        else appender.appendTimestampTZ(new DuckDBTimestampTZValue(BigInt(p.end)));
        appender.endRow();
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  /** A program the inventory places in another organization does not belong in this scope's answer. */
  private async checkOrg(conn: DuckDBConnection): Promise<void> {
    const orgId = this.spec.scope.orgId;
    if (this.isFramework || orgId === undefined) return;
    const [stray] = await queryRows<{ id: string; org_id: string }>(conn, ANSWER_IDS_OTHER_ORG_SQL, {
      rowless: [...this.rowless],
      org_id: orgId,
    });
    if (stray) {
      throw new UsageBatchError(
        `the answer holds program ${stray.id}, which the inventory places in organization ${stray.org_id}, not ${orgId}: ` +
          `refused, nothing of this scope was changed`,
      );
    }
  }

  /** Rows the window and scope hold now, and how many of them no page returned (the replacement deletes those). */
  private async deletions(
    conn: DuckDBConnection,
    table: keyof typeof TABLE_SQL,
  ): Promise<{ existing: number; unseen: number }> {
    const [r] = await queryRows<{ existing: bigint; unseen: bigint }>(
      conn,
      readSql(TABLE_SQL[table].windowDeletionsFile),
      {
        ...this.windowParams(),
        ...this.scopeParams(),
      },
    );
    return { existing: Number(r?.existing ?? 0), unseen: Number(r?.unseen ?? 0) };
  }

  /** BEGIN … COMMIT on the batch's connection, inside the store's exclusive section, on COMMIT_THREADS. */
  private inTransaction<T>(conn: DuckDBConnection, fn: () => Promise<T>): Promise<T> {
    return this.host.exclusive(() =>
      this.host.onCommitThreads(conn, async () => {
        await execSql(conn, 'BEGIN TRANSACTION');
        try {
          const out = await fn();
          await execSql(conn, 'COMMIT');
          return out;
        } catch (err) {
          await execSql(conn, 'ROLLBACK').catch(() => {
            // no transaction left to roll back; the commit's error is rethrown below
          });
          throw err;
        }
      }),
    );
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
    await writeCoverageRow(conn, {
      source: spec.coverage.source,
      granularity: spec.granularity,
      scope: spec.coverage.scope,
      windowStart: spec.windowStart,
      windowEnd: spec.windowEnd,
      status: spec.coverage.status,
      rows,
      runId: spec.runId,
      collectedAt: spec.collectedAt,
    });
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
    // Only ids whose rows could repeat a key are grouped; with none, no key can repeat.
    const suspects = [...(this.writer?.keys.suspects ?? [])];
    const [dup] =
      suspects.length === 0 ? [] : await queryRows<Record<string, unknown>>(conn, readSql(dupSql), { ids: suspects });
    // A bucket whose metrics came in parts, none twice, is one bucket: folded, as the long rows were.
    if (dup && dup.metric === null) await execSql(conn, readSql('src/store/sql/staging_usage_merge.sql'));
    else if (dup) {
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
    const table = this.isFramework ? 'usage_framework' : 'usage_program';
    if (this.rowless.size > 0) await execSql(conn, SEEN_IDS_ADD_SQL, { ids: [...this.rowless] });
    await execSql(conn, TABLE_SQL[table].seenFromStagingSql);
    const { existing, unseen } = await this.deletions(conn, table);
    if (existing === 0 || unseen / existing <= share) return;
    throw new DeletionHeldError(unseen, existing, share);
  }

  async commit(): Promise<{ rows: number }> {
    if (this.state !== 'open')
      throw new Error(`cannot commit a usage batch that is ${this.state === 'closed' ? 'closed' : 'committing'}`);
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
      this.writer?.close(); // its suspects (BucketKeys) are still read by the checks below
      if (this.refused)
        throw new UsageBatchError(
          `${this.spec.table} batch refused, nothing was written: one of its pages was refused`,
        );
      // The checks and the transaction with no page parsed beside them: at four times the API's rate, pages
      // parsed during a commit's checks and insert ran DuckDB out of collect.memory_limit (BENCHMARKS.md,
      // "No page parsed beside a commit (2026-11-29)").
      const rows = await this.host.allPageSlots(async () => {
        // The pages' plan periods in one append: an appender per page cost a flush (and its transaction) each.
        await this.flushPeriods(conn);
        await this.checkOrg(conn);
        await this.holdDeletions(conn);
        await this.check(conn);
        return this.commitTransaction(conn);
      });
      return { rows };
    } finally {
      await this.close();
    }
  }

  /** The scope's rows replace its window, with its coverage and marks, in one transaction; the values staged. */
  private commitTransaction(conn: DuckDBConnection): Promise<number> {
    // One transaction for the whole scope: whatever its pages were, they replace the window together.
    return this.inTransaction(conn, async () => {
      const table = this.isFramework ? 'usage_framework' : 'usage_program';
      const deleted = await execSql(conn, TABLE_SQL[table].deleteWindowSql, {
        ...this.windowParams(),
        ...this.scopeParams(),
      });
      await execSql(conn, readSql('src/store/sql/billing_periods_insert_staged.sql'));
      const inserted = await this.insertStaged(conn);
      await execSql(conn, ROW_COUNT_ADD_SQL, { table_name: `${table}_buckets`, delta: BigInt(inserted - deleted) });
      // Coverage counts values (rows of the long view), as it always has.
      await this.writeCoverage(conn, this.staged);
      await execSql(conn, MARK_PARTS_DIRTY_SQL, {
        table_name: `${table}_buckets`,
        parts: bucketParts(this.spec.granularity, this.spec.windowStart, this.spec.windowEnd),
      });
      return this.staged;
    });
  }

  async abort(): Promise<void> {
    // A commit under way is not interrupted: it ends in its own COMMIT or ROLLBACK.
    if (this.committing) {
      await this.committing.catch(() => {
        // the commit's caller sees its error; closing only waits for it to end
      });
      return;
    }
    await this.close();
  }

  private async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    await this.opening?.catch(() => {
      // the opener's caller sees its error; closing only waits for it to end
    });
    await this.pages;
    try {
      this.writer?.close();
    } catch {
      // An appender may hold a row that failed; its data is dropped with the TEMP tables anyway.
    }
    this.writer = undefined;
    if (this.conn) {
      await execSql(this.conn, STAGING_USAGE_DROP_SQL).catch(() => {
        // a TEMP table: it goes with the connection if the drop fails
      });
      await this.host.releaseMemory(this.conn).catch(() => {
        // only a hint to DuckDB to free memory; the batch is closed either way
      });
      this.conn.closeSync();
      this.conn = undefined;
    }
    this.host.batchClosed(this);
  }
}
