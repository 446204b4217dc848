// A page's rows (and the test kit's long rows) staged as the batch's wide rows, one per bucket and plan
// period with a BIGINT column per metric, written straight into DuckDB data chunks for the appender.
import { BIGINT, DuckDBDataChunk, INTEGER, TIMESTAMPTZ, type DuckDBAppender } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { endianness } from 'node:os';
import { METRIC_COLUMNS, type Int64, type PageRows } from '../page/pageRows.js';
import { BucketKeys } from './bucketKeys.js';
import type { PeriodBook } from './periodBook.js';

const KEY_COLUMNS = 4; // item, period_local, timeframe_start, timeframe_end
const TYPES = [INTEGER, INTEGER, TIMESTAMPTZ, TIMESTAMPTZ, ...METRIC_COLUMNS.map(() => BIGINT)];
/** The columns of staging_rows and of staging_items (staging_usage_create.sql). */
export const STAGING_COLUMNS = TYPES.length;
export const ITEM_COLUMNS = 4; // item, org_id, program_id, framework_id
const CHUNK_ROWS = 2048; // DuckDB's standard vector size
// The writer lays int64 cells and validity words out as DuckDB does on a little-endian machine.
if (endianness() !== 'LE')
  throw new Error('usage-pipeline writes DuckDB vectors in little-endian order; this machine is big-endian');

/**
 * Fills data chunks of staging_rows and hands each full one to its appender; a row's ids go once per run
 * of rows into staging_items, under a batch-local item number. The cells are written into this writer's
 * own buffers (an int64 as two 32-bit words, a NULL as a cleared validity bit) and copied into the
 * chunk's vectors once per chunk: node-api's typed vectors take a bigint per cell and build two more per
 * validity write, which cost more than the page's parse (BENCHMARKS.md, "Pages scanned from their bytes (2026-11-23)").
 */
export class WideChunkWriter {
  // One chunk, reset after each append: a chunk's native memory is freed only when V8 collects its
  // wrapper, and V8 does not see that memory, so a chunk per 2,048 rows piled up hundreds of MB of
  // native memory between collections (BENCHMARKS.md, "Issue 13: the collector's memory").
  private readonly chunk = DuckDBDataChunk.create(TYPES);
  private readonly vectors = TYPES.map((_, c) => duckdb.data_chunk_get_vector(this.chunk.chunk, c));
  /** Each column's cells, 8 bytes each (the two INTEGER columns use 4). */
  private readonly words = TYPES.map(() => new Uint32Array(CHUNK_ROWS * 2));
  private readonly int64s = this.words.map((w) => new BigInt64Array(w.buffer));
  /** Validity bits per column (1 = set), and whether any cell of the chunk's column is NULL. */
  private readonly valid = TYPES.map(() => new Uint32Array(CHUNK_ROWS / 32).fill(0xffffffff));
  private readonly hasNull = new Array<boolean>(STAGING_COLUMNS).fill(false);
  private row = 0;
  /** The last item's ids and number (rows come in runs of one item). */
  private org: string | null | undefined;
  private program: string | undefined;
  private framework: string | null | undefined;
  private item = -1;
  private closed = false;
  /** Which ids could have a bucket key twice (see BucketKeys). */
  readonly keys: BucketKeys;

  constructor(
    private readonly rows: DuckDBAppender,
    private readonly items: DuckDBAppender,
    book: PeriodBook,
  ) {
    this.keys = new BucketKeys(book);
  }

  /** One bucket row; `metrics` in METRIC_COLUMNS order (a shorter list leaves the rest NULL), null = not reported. */
  add(
    org: string | null,
    program: string,
    framework: string | null,
    period: number,
    start: Int64,
    end: Int64,
    metrics: ArrayLike<Int64 | null>,
  ): void {
    this.keys.see(framework ?? program, period, start);
    if (program !== this.program || framework !== this.framework || org !== this.org)
      this.newItem(org, program, framework);
    const i = this.row;
    this.words[0]![i] = this.item;
    this.words[1]![i] = period;
    this.int64(2, i, start);
    this.int64(3, i, end);
    const n = metrics.length;
    for (let m = 0; m < METRIC_COLUMNS.length; m++) {
      const v = m < n ? metrics[m]! : null;
      if (v === null) this.setNull(KEY_COLUMNS + m, i);
      else this.int64(KEY_COLUMNS + m, i, v);
    }
    this.row = i + 1;
    if (this.row === CHUNK_ROWS) this.emit();
  }

  private newItem(org: string | null, program: string, framework: string | null): void {
    const items = this.items;
    items.appendInteger(++this.item);
    if (org === null) items.appendNull();
    else items.appendVarchar(org);
    items.appendVarchar(program);
    if (framework === null) items.appendNull();
    else items.appendVarchar(framework);
    items.endRow();
    this.org = org;
    this.program = program;
    this.framework = framework;
  }

  private int64(c: number, i: number, v: Int64): void {
    if (typeof v === 'bigint') {
      if (BigInt.asIntN(64, v) !== v) throw new RangeError(`${v} is outside int64`);
      this.int64s[c]![i] = v;
      return;
    }
    const hi = Math.floor(v / 4294967296);
    const w = this.words[c]!;
    w[2 * i] = v - hi * 4294967296;
    w[2 * i + 1] = hi;
  }

  private setNull(c: number, i: number): void {
    this.valid[c]![i >>> 5]! &= ~(1 << (i & 31));
    this.hasNull[c] = true;
  }

  private emit(): void {
    const rows = this.row;
    if (rows === 0) return;
    const chunk = this.chunk.chunk;
    duckdb.data_chunk_set_size(chunk, rows);
    for (let c = 0; c < STAGING_COLUMNS; c++) {
      const vector = this.vectors[c]!;
      duckdb.copy_data_to_vector(vector, 0, this.words[c]!.buffer, 0, rows * (c < 2 ? 4 : 8));
      if (this.hasNull[c]) {
        duckdb.vector_ensure_validity_writable(vector);
        duckdb.copy_data_to_vector_validity(vector, 0, this.valid[c]!.buffer, 0, Math.ceil(rows / 64) * 8);
        this.valid[c]!.fill(0xffffffff);
        this.hasNull[c] = false;
      }
    }
    // The appender copies the rows, so the chunk is emptied and filled again.
    this.rows.appendDataChunk(this.chunk);
    this.chunk.reset();
    this.row = 0;
  }

  /** Appends the rows added since the last full chunk and flushes both appenders; the writer stays usable for the next page. */
  flush(): void {
    this.emit();
    this.items.flushSync();
    this.rows.flushSync();
  }

  /** Closes the appenders (flushing what they hold); once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.items.closeSync();
    } finally {
      this.rows.closeSync();
    }
  }
}

export interface PageRead {
  items: number | null;
  cursor: string | null;
  programIds: string[];
  /** Framework ids (frameworks pages) or program ids (programs pages) the page returned without a bucket
   *  row: returned all the same (the deletion guard counts them so); the ids with rows are in staging. */
  rowlessIds: string[];
  /** Non-zero values staged. */
  values: number;
}

/** A page's rows to the writer, in page order: its periods are numbered in the order their first row comes. */
export function writePage(page: PageRows, org: string | null, book: PeriodBook, out: WideChunkWriter): PageRead {
  const locals = new Int32Array(page.periodIds.length).fill(-1);
  const withRows = new Uint8Array(page.programIds.length);
  const metrics = new Array<Int64 | null>(page.width).fill(null);
  for (let r = 0; r < page.rows; r++) {
    const item = page.rowItem[r]!;
    const period = page.rowPeriod[r]!;
    let local = locals[period]!;
    if (local < 0) {
      local = book.period(
        page.periodIds[period]!,
        page.periodPlans[period]!,
        page.periodStarts[period]!,
        page.periodEnds[period]!,
      );
      locals[period] = local;
    }
    for (let m = 0; m < metrics.length; m++) metrics[m] = page.metric(r, m);
    out.add(org, page.programIds[item]!, page.frameworkIds[item]!, local, page.start(r), page.end(r), metrics);
    withRows[item] = 1;
  }
  const rowless: string[] = [];
  for (let i = 0; i < withRows.length; i++)
    if (withRows[i] === 0) rowless.push(page.frameworkIds[i] ?? page.programIds[i]!);
  return {
    items: page.items,
    cursor: page.cursor,
    programIds: page.programIds,
    rowlessIds: rowless,
    values: page.values,
  };
}
