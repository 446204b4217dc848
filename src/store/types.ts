// Row shapes the store takes and returns. Inventory and usage rows use the tables' column names;
// book-keeping objects are camelCase. Times are Date (UTC instants); int64 values are bigint.
import type { CoverageStatus, RunStatus } from '../domain/status.js';
import type { Granularity, Source } from '../domain/granularity.js';
import type { PageRows } from '../page/pageRows.js';
import type { PageReader } from '../page/pageReader.js';

export type { Granularity };

export interface UsageBatchSpec {
  table: 'usage_program' | 'usage_framework';
  /** usage_program only; defaults to 'v2'. */
  apiVersion?: 'v1' | 'v2';
  granularity: Granularity;
  /** Half-open: rows with timeframe_start in [windowStart, windowEnd) within the scope are replaced. */
  windowStart: Date;
  windowEnd: Date;
  /**
   * The delete predicate: org_id = orgId and/or program_id in programIds; neither = the whole window
   * for that table/apiVersion/granularity. Every staged row must fall inside it (else commit refuses).
   */
  scope: { orgId?: string; programIds?: readonly string[] };
  /** The window recorded as collected. For daily program usage, `scope` is the organization whose window
   *  the batch replaced (collect scopes every batch by organization): the alert rules re-price exactly
   *  those days of that organization from this batch's rows (store/alerts.ts). */
  coverage: { source: string; scope: string; status: 'complete' | 'partial' };
  /** Page-loaded batches: the largest share (0..1) of the window's stored rows the answer may delete
   *  outright; beyond it commit() refuses with DeletionHeldError. Omitted: no limit. */
  maxDeletionShare?: number;
  runId: string;
  collectedAt: Date;
}

/** Which consumption endpoint a raw page came from: it decides how the page is read. */
export type PageSource = Source;

export interface PageLoaded {
  /** Items on the page (programs or frameworks); null when the body had no such array. */
  items: number | null;
  /** pagination.cursor, or null when the page had none. */
  cursor: string | null;
  /** The program id of every item, in page order. */
  programIds: string[];
  /** Rows staged from this page. */
  rows: number;
}

export interface UsageBatch {
  /**
   * Stages one raw response body of a consumption endpoint (its bytes, or its text): read strictly into
   * wide bucket rows, every value exact as int64 (page/readPage.ts). Pages of one batch are staged
   * one at a time, in call order.
   */
  appendPage(source: PageSource, page: Buffer | string): Promise<PageLoaded>;
  /** appendPage in two steps: the page read at once (a PageContentError when it is not the documented
   *  shape), its rows staged later, after the batch's earlier pages. */
  read(source: PageSource, page: Buffer | string): PageRows;
  /** read() on a page reader's worker thread (page/pageReader.ts); `page` is not to be read after. */
  readOn(reader: PageReader, source: PageSource, page: Buffer): Promise<PageRows>;
  stage(source: PageSource, rows: PageRows): Promise<PageLoaded>;
  /**
   * One transaction: refuse duplicate keys and rows outside the window/scope (naming the row), delete
   * the window+scope, insert the staged rows, write the coverage row. Then the staging is dropped.
   */
  commit(): Promise<{ rows: number }>;
  /** Drops the staged rows; the database is unchanged. Safe to call after commit or twice. */
  abort(): Promise<void>;
  /** Rows appended so far. */
  readonly stagedRows: number;
}

export interface ProgramRow {
  program_id: string;
  org_id: string | null;
  name: string | null;
  region_id: string | null;
  created_at: Date | null;
}

export interface FrameworkRow {
  framework_id: string;
  program_id: string;
  name: string | null;
  current_state: string | null;
  created_at: Date | null;
}

export interface SnapshotRow {
  snapshot_id: string;
  program_id: string;
  name: string | null;
  source_framework_id: string | null;
  created_at: Date | null;
  manual: boolean | null;
  expires_at: Date | null;
}

/** A coverage row written on its own: for not_eligible and failed scopes (no data). */
export interface CoverageRow {
  source: string;
  granularity: Granularity;
  scope: string;
  windowStart: Date;
  windowEnd: Date;
  status: CoverageStatus;
  rows?: number;
  runId: string;
  collectedAt: Date;
  detail?: string | null;
}

export interface CoverageSummaryRow {
  source: string;
  granularity: string;
  scope: string;
  /** Earliest start of a complete window, or null if none is complete. */
  firstCompleteStart: Date | null;
  /** Latest end (exclusive) of a complete window. */
  lastCompleteEnd: Date | null;
  /** Latest end of a window with data (complete or partial). */
  lastDataEnd: Date | null;
  completeWindows: number;
  lastCollectedAt: Date;
  /** When a window of this scope was last completely collected (null: never). */
  lastCompleteCollectedAt: Date | null;
  lastStatus: CoverageStatus;
  lastDetail: string | null;
  lastRunId: string;
}

export interface RunRow {
  runId: string;
  command: string;
  startedAt: Date;
  finishedAt: Date | null;
  status: RunStatus;
  requests: number;
  retries: number;
  throttled: number;
  pages: number;
  rowsLoaded: number;
  error: string | null;
  /** JSON text of the run's effective options. */
  options: string | null;
  /** Requests spent on the inventory (programs, frameworks and snapshots listings). */
  inventoryRequests: number;
}

export interface UsageSummaryRow {
  table: 'usage_program' | 'usage_framework';
  apiVersion: string | null;
  granularity: string;
  rows: number;
  firstStart: Date | null;
  lastEnd: Date | null;
  lastCollectedAt: Date | null;
}
