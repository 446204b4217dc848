// A consumption page read but not yet staged: what both ways of reading a page (scanPage.ts, and the
// general way in readPage.ts) hand to the store's staging writer. Rows live in typed arrays, not objects,
// so a page waiting for its turn to be staged costs a few MB and no garbage collection.
import { V1_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';

/** An int64 as a page's rows hold it: a number when it is a safe integer, else a bigint. */
export type Int64 = number | bigint;

/** A safe integer as a number, anything larger as the bigint. */
export function int64(v: bigint): Int64 {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
}

/**
 * The metric cells of a row, in order: the v2 program metrics, then the v1 ones (a frameworks page's rows
 * hold the first six). The store's staging tables (store/sql/staging_usage_create.sql) follow this order.
 */
export const METRIC_COLUMNS: readonly string[] = [...V2_PROGRAM_METRICS, ...V1_METRICS];

/**
 * What a page holds, read but not yet staged: its items, plan periods and bucket rows, in the order the
 * page lists them. Cells are numbers; the rare int64 beyond 2^53 (only the general way reads one) is kept
 * aside, exactly, under its cell's index.
 */
export class PageRows {
  /** Metric cell markers (values are never negative). */
  static readonly NOT_REPORTED = -1;
  static readonly BIG = -2;

  items: number | null = null;
  cursor: string | null = null;
  readonly programIds: string[] = [];
  readonly frameworkIds: (string | null)[] = [];
  readonly periodIds: string[] = [];
  readonly periodPlans: string[] = [];
  readonly periodStarts: Int64[] = [];
  readonly periodEnds: (Int64 | null)[] = [];
  rows = 0;
  /** Non-zero values. */
  values = 0;
  /** Per row: its item and period (indexes into the arrays above), its timeframe in microseconds. */
  rowItem: Int32Array;
  rowPeriod: Int32Array;
  rowStart: Float64Array;
  rowEnd: Float64Array;
  /** Per row, `width` metric cells in METRIC_COLUMNS order: NOT_REPORTED, BIG (the value in `bigs`), or the value. */
  rowMetrics: Float64Array;
  /** Cells beyond 2^53, by index: a metric cell's (row * width + column), or a time's (-1 - (row * 2 + 0|1)). */
  readonly bigs = new Map<number, bigint>();

  /** `capacity`: the rows expected (more grow the arrays). */
  constructor(
    readonly width: number,
    capacity = 1024,
  ) {
    this.rowItem = new Int32Array(capacity);
    this.rowPeriod = new Int32Array(capacity);
    this.rowStart = new Float64Array(capacity);
    this.rowEnd = new Float64Array(capacity);
    this.rowMetrics = new Float64Array(capacity * width);
  }

  /** Room for one more row, its metrics cleared; the row counts once finishRow() is called. */
  beginRow(): number {
    const r = this.rows;
    if (r === this.rowItem.length) {
      const grow = <T extends Int32Array | Float64Array>(a: T, n: number): T => {
        const b = new (a.constructor as new (n: number) => T)(n);
        b.set(a);
        return b;
      };
      this.rowItem = grow(this.rowItem, 2 * r);
      this.rowPeriod = grow(this.rowPeriod, 2 * r);
      this.rowStart = grow(this.rowStart, 2 * r);
      this.rowEnd = grow(this.rowEnd, 2 * r);
      this.rowMetrics = grow(this.rowMetrics, 2 * r * this.width);
    }
    this.rowMetrics.fill(PageRows.NOT_REPORTED, r * this.width, (r + 1) * this.width);
    return r;
  }

  /** Sets a metric cell of the row begun; returns false when the row already has that metric. */
  setMetric(r: number, column: number, v: Int64): boolean {
    const at = r * this.width + column;
    if (this.rowMetrics[at] !== PageRows.NOT_REPORTED) return false;
    if (typeof v === 'bigint') {
      this.rowMetrics[at] = PageRows.BIG;
      this.bigs.set(at, v);
    } else {
      this.rowMetrics[at] = v;
    }
    return true;
  }

  /** Counts the row begun as r, with its item, period, timeframe and `values` non-zero values. */
  finishRow(r: number, item: number, period: number, start: Int64, end: Int64, values: number): void {
    this.rowItem[r] = item;
    this.rowPeriod[r] = period;
    this.rowStart[r] = this.time(-1 - 2 * r, start);
    this.rowEnd[r] = this.time(-2 - 2 * r, end);
    this.values += values;
    this.rows = r + 1;
  }

  private time(at: number, v: Int64): number {
    if (typeof v === 'number') return v;
    this.bigs.set(at, v);
    return Number.NaN;
  }

  /** A metric cell: null when not reported. */
  metric(r: number, column: number): Int64 | null {
    const at = r * this.width + column;
    const v = this.rowMetrics[at]!;
    return v === PageRows.NOT_REPORTED ? null : v === PageRows.BIG ? this.bigs.get(at)! : v;
  }

  start(r: number): Int64 {
    const v = this.rowStart[r]!;
    return Number.isNaN(v) ? this.bigs.get(-1 - 2 * r)! : v;
  }

  end(r: number): Int64 {
    const v = this.rowEnd[r]!;
    return Number.isNaN(v) ? this.bigs.get(-2 - 2 * r)! : v;
  }
}
