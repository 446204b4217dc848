// Consumption pages and long rows turned into the batch's wide staging rows (one per bucket and plan
// period, a BIGINT column per metric), written into DuckDB data chunks for the appender.
//
// A page is parsed by JSON.parse unless its text holds a number literal that JSON.parse could not keep
// exactly or could not tell apart (16+ digits, a fraction or exponent, a minus sign): those pages go
// through lossless-json. Checks are strict, never a filter (ARCHITECTURE.md, "Strict pages"): any leaf
// not of its documented type refuses the page, and pageCheck.ts names the first offending path.
import {
  BIGINT,
  DuckDBDataChunk,
  INTEGER,
  TIMESTAMPTZ,
  VARCHAR,
  DuckDBTimestampTZValue,
  type DuckDBAppender,
  type DuckDBValue,
  type DuckDBVector,
} from '@duckdb/node-api';
import { isLosslessNumber, parse as losslessParse, type LosslessNumber } from 'lossless-json';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { counterProblem, firstOffence, type Offence } from './pageCheck.js';
import type { PageSource } from './types.js';

/** The metric columns of staging_usage_create.sql and usage_program_buckets, in order. */
export const METRIC_COLUMNS: readonly string[] = [...V2_PROGRAM_METRICS, ...V1_METRICS];
const METRIC_INDEX = new Map(METRIC_COLUMNS.map((m, i) => [m, i]));
const FRAMEWORK_METRICS = new Set<string>(V2_FRAMEWORK_METRICS);
const PROGRAM_METRICS = new Set<string>([...V2_PROGRAM_METRICS, ...V1_METRICS]);
const V1_FIELDS = V1_METRICS.map((m) => [m, METRIC_INDEX.get(m)!] as const);

const KEY_COLUMNS = 6; // org_id, program_id, framework_id, period_local, timeframe_start, timeframe_end
const TYPES = [VARCHAR, VARCHAR, VARCHAR, INTEGER, TIMESTAMPTZ, TIMESTAMPTZ, ...METRIC_COLUMNS.map(() => BIGINT)];
export const STAGING_COLUMNS = TYPES.length;
const CHUNK_ROWS = 2048; // DuckDB's standard vector size
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Whether the text holds a number literal JSON.parse would round (16+ digits) or could not tell from an
 * integer (1.0, 1e3), or a negative one (-0). Every number a page's walk accepts is an object member's
 * value, so only what follows a ':' (and optional whitespace) is looked at; a number elsewhere (in an
 * array) is refused by the walk whichever parser read it. A ':' inside a string may send a page down the
 * exact path needlessly (harmless). A hand-written scan: the regular expression it replaces cost about
 * 40 % of JSON.parse's time on a page (BENCHMARKS.md, "Session 4"); indexOf finds the colons natively.
 */
export function needsLossless(s: string): boolean {
  for (let i = s.indexOf(':'); i >= 0; i = s.indexOf(':', i + 1)) {
    let j = i + 1;
    let c = s.charCodeAt(j);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++j);
    if (c === 45) return true; // '-'
    if (c < 48 || c > 57) continue;
    const first = j;
    do c = s.charCodeAt(++j);
    while (c >= 48 && c <= 57);
    if (j - first >= 16 || c === 46 || c === 101 || c === 69) return true; // 16+ digits, '.', 'e', 'E'
    i = j - 1;
  }
  return false;
}

/** A page departed from its documented shape; the caller names the first offending path. */
export class PageShapeError extends Error {
  constructor(readonly offence: Offence) {
    super(`${offence.path}: ${offence.problem}`);
  }
}

/** A plan period as reported, numbered within one batch (staging_periods). */
export interface StagedPeriod {
  local: number;
  id: string;
  plan: string;
  start: DuckDBTimestampTZValue;
  end: DuckDBTimestampTZValue | null;
}

/** Fills data chunks of the staging table's columns and hands each full one to the appender. */
export class WideChunkWriter {
  // One chunk, reset after each append: a chunk's native memory is freed only when V8 collects its
  // wrapper, and V8 does not see that memory, so a chunk per 2,048 rows piled up hundreds of MB of
  // native memory between collections (BENCHMARKS.md, "Issue 13: the collector's memory").
  private chunk: DuckDBDataChunk | undefined;
  private vectors: DuckDBVector<DuckDBValue>[] = [];
  private row = 0;
  /** Which ids could have a bucket key twice (see BucketKeys). */
  readonly keys: BucketKeys;

  constructor(
    private readonly appender: DuckDBAppender,
    book: PeriodBook,
  ) {
    this.keys = new BucketKeys(book);
  }

  add(org: string | null, program: string, framework: string | null, period: number, start: DuckDBTimestampTZValue, end: DuckDBTimestampTZValue, metrics: (bigint | null)[]): void {
    this.keys.see(framework ?? program, period, start);
    if (this.vectors.length === 0) {
      const chunk = (this.chunk ??= DuckDBDataChunk.create(TYPES));
      // Setting the size drops the chunk's cached vectors, so they are taken afresh for each fill.
      chunk.rowCount = CHUNK_ROWS;
      this.vectors = TYPES.map((_, i) => chunk.getColumnVector(i) as DuckDBVector<DuckDBValue>);
      this.row = 0;
    }
    const v = this.vectors;
    const i = this.row;
    v[0]!.setItem(i, org);
    v[1]!.setItem(i, program);
    v[2]!.setItem(i, framework);
    v[3]!.setItem(i, period);
    v[4]!.setItem(i, start);
    v[5]!.setItem(i, end);
    for (let m = 0; m < metrics.length; m++) v[KEY_COLUMNS + m]!.setItem(i, metrics[m] ?? null);
    this.row = i + 1;
    if (this.row === CHUNK_ROWS) this.emit();
  }

  private emit(): void {
    const chunk = this.chunk;
    if (chunk === undefined || this.row === 0) return;
    for (const vec of this.vectors) vec.flush();
    if (this.row < CHUNK_ROWS) chunk.rowCount = this.row;
    // The appender copies the rows, so the chunk is emptied (its strings freed) and filled again.
    this.appender.appendDataChunk(chunk);
    chunk.reset();
    this.vectors = [];
    this.row = 0;
  }

  /** Appends the rows added since the last full chunk; the writer stays usable for the next page. */
  finish(): void {
    this.emit();
  }
}

/**
 * The ids whose rows could hold a bucket key (id, period_id, timeframe_start) more than once in a batch,
 * found as rows are written, so that the batch's duplicate check (staging_usage_duplicate_*.sql) groups
 * only their rows, not the whole staging table: that aggregate was the commit's largest memory
 * (BENCHMARKS.md, "Issue 13: the collector's memory"). Conservative: an id is a suspect when its rows
 * come in two runs (on two pages, or two items of one page), when a period id comes back within its
 * run, or when a period's timeframes do not strictly increase. The SQL decides; a suspect is not a
 * duplicate. An API that lists each item's buckets once, in order, leaves no suspect.
 */
export class BucketKeys {
  readonly suspects = new Set<string>();
  private readonly seen = new Set<string>();
  private id: string | undefined;
  private periodId: string | undefined;
  private readonly runPeriods = new Set<string>();
  private lastStart = -1n;

  constructor(private readonly book: PeriodBook) {}

  see(id: string, period: number, start: DuckDBTimestampTZValue): void {
    if (id !== this.id) {
      if (this.seen.has(id)) this.suspects.add(id);
      else this.seen.add(id);
      this.id = id;
      this.periodId = undefined;
      this.runPeriods.clear();
    }
    const periodId = this.book.periods[period]!.id;
    if (periodId !== this.periodId) {
      if (this.runPeriods.has(periodId)) this.suspects.add(id);
      this.runPeriods.add(periodId);
      this.periodId = periodId;
      this.lastStart = -1n << 63n;
    }
    if (start.micros <= this.lastStart) this.suspects.add(id);
    this.lastStart = start.micros;
  }
}

/** The batch's periods and timestamps: each distinct one converted once. */
export class PeriodBook {
  readonly periods: StagedPeriod[] = [];
  private readonly byKey = new Map<string, StagedPeriod>();
  private readonly times = new Map<string, DuckDBTimestampTZValue | null>();
  /** Periods not yet written to staging_periods. */
  fresh: StagedPeriod[] = [];

  /** A time string as TIMESTAMPTZ, or null when it is not an ISO 8601 date-time with a zone. */
  time(s: unknown): DuckDBTimestampTZValue | null {
    if (typeof s !== 'string') return null;
    let v = this.times.get(s);
    if (v === undefined) {
      const ms = ISO_TIME.test(s) ? Date.parse(s) : NaN;
      v = Number.isNaN(ms) ? null : new DuckDBTimestampTZValue(BigInt(ms) * 1000n + subMillisMicros(s));
      if (this.times.size > 100_000) this.times.clear();
      this.times.set(s, v);
    }
    return v;
  }

  fromDate(d: Date): DuckDBTimestampTZValue {
    const ms = d.getTime();
    if (!Number.isFinite(ms)) throw new RangeError('invalid Date (NaN) where a timestamp was expected');
    return new DuckDBTimestampTZValue(BigInt(ms) * 1000n);
  }

  period(id: string, plan: string, start: DuckDBTimestampTZValue, end: DuckDBTimestampTZValue | null): number {
    const key = `${id}\u0000${plan}\u0000${start.micros}\u0000${end?.micros ?? ''}`;
    let p = this.byKey.get(key);
    if (p === undefined) {
      p = { local: this.periods.length, id, plan, start, end };
      this.periods.push(p);
      this.fresh.push(p);
      this.byKey.set(key, p);
    }
    return p.local;
  }
}

/** Microseconds beyond the millisecond that Date.parse drops (".123456Z" keeps its 456). */
function subMillisMicros(s: string): bigint {
  const f = /\.(\d{4,9})/.exec(s)?.[1];
  return f ? BigInt(f.slice(3, 6).padEnd(3, '0')) : 0n;
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

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** A counter as bigint (0n for zero), or undefined when it is not a JSON integer in [0, 2^63-1]. */
function counter(v: unknown): bigint | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
  if (isLosslessNumber(v)) return counterProblem(v) === null ? BigInt((v as LosslessNumber).value) : undefined;
  return undefined;
}

/**
 * Reads one consumption page into wide rows. Throws PageShapeError (naming the first offending path)
 * when any leaf is not of its documented type, or when a bucket reports a metric the request did not
 * ask for, or the same metric twice.
 */
export function readPage(source: PageSource, json: string, org: string | null, book: PeriodBook, out: WideChunkWriter): PageRead {
  const lossless = needsLossless(json);
  let body: unknown;
  try {
    body = lossless ? losslessParse(json) : JSON.parse(json);
  } catch (err) {
    throw new PageShapeError({ path: '$', problem: `not JSON: ${(err as Error).message}` });
  }
  const refuse = (): never => {
    throw new PageShapeError(firstOffence(source, json) ?? { path: '$', problem: 'the page does not have the documented shape' });
  };
  if (!isObj(body)) return refuse();
  const key = source === 'v2_frameworks' ? 'frameworks' : 'programs';
  const pagination = body.pagination;
  const rawCursor = isObj(pagination) ? pagination.cursor : undefined;
  const cursor = rawCursor === undefined || rawCursor === null ? null : isLosslessNumber(rawCursor) ? rawCursor.value : typeof rawCursor === 'string' ? rawCursor : String(rawCursor);
  const list = body[key];
  if (list === undefined || list === null) return { items: null, cursor, programIds: [], rowlessIds: [], values: 0 };
  if (!Array.isArray(list)) return refuse();

  const isFramework = source === 'v2_frameworks';
  const allowed = isFramework ? FRAMEWORK_METRICS : PROGRAM_METRICS;
  const width = isFramework ? V2_FRAMEWORK_METRICS.length : METRIC_COLUMNS.length;
  const programIds: string[] = [];
  const rowless: string[] = [];
  let values = 0;
  // Rows go to the writer as they are read: a page refused half-way refuses its whole batch (usageBatch.ts
  // marks it so, and the staging table is dropped unread), so nothing of it is ever committed.
  // One scratch row of metrics serves every bucket: the writer copies it.
  const metrics = new Array<bigint | null>(width).fill(null);
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (!isObj(item) || !isId(item.program_id)) return refuse();
    const programId = item.program_id;
    let frameworkId: string | null = null;
    if (isFramework) {
      if (!isId(item.framework_id)) return refuse();
      frameworkId = item.framework_id;
    }
    programIds.push(programId);
    let wrote = false;
    const periods = item.periods;
    if (!Array.isArray(periods)) return refuse();
    for (const p of periods as unknown[]) {
      if (!isObj(p) || !isId(p.period_id) || !isId(p.period_plan)) return refuse();
      const start = book.time(p.period_start);
      const end = p.period_end === undefined || p.period_end === null ? null : book.time(p.period_end);
      if (start === null || (end === null && p.period_end !== undefined && p.period_end !== null)) return refuse();
      const consumption = p.consumption;
      if (!Array.isArray(consumption)) return refuse();
      let local = -1;
      for (const b of consumption as unknown[]) {
        if (!isObj(b)) return refuse();
        const ts = book.time(b.timeframe_start);
        const te = book.time(b.timeframe_end);
        if (ts === null || te === null) return refuse();
        let reported = false;
        if (source === 'v1_programs') {
          for (const [name, col] of V1_FIELDS) {
            const raw = b[name];
            if (raw === undefined || raw === null) continue;
            const n = counter(raw);
            if (n === undefined) return refuse();
            if (n === 0n) continue;
            if (!reported) metrics.fill(null);
            reported = true;
            metrics[col] = n;
            values++;
          }
        } else {
          const list = b.metrics;
          if (!Array.isArray(list)) return refuse();
          for (let l = 0; l < list.length; l++) {
            const m: unknown = list[l];
            if (!isObj(m) || !isId(m.metric_name)) return refuse();
            const n = counter(m.value);
            if (n === undefined) return refuse();
            const col = allowed.has(m.metric_name) ? METRIC_INDEX.get(m.metric_name) : undefined;
            if (col === undefined) {
              throw new PageShapeError({
                path: `$.${key}[${i}].periods[${periods.indexOf(p)}].consumption[${consumption.indexOf(b)}].metrics[${l}].metric_name`,
                problem: `${m.metric_name} is not a metric this request asked for`,
              });
            }
            if (n === 0n) continue; // an explicit 0 is stored as absent: the same usage gives the same rows
            if (!reported) metrics.fill(null);
            reported = true;
            if (metrics[col] !== null) {
              throw new PageShapeError({
                path: `$.${key}[${i}].periods[${periods.indexOf(p)}].consumption[${consumption.indexOf(b)}].metrics[${l}]`,
                problem: `${m.metric_name} is given twice in one bucket`,
              });
            }
            metrics[col] = n;
            values++;
          }
        }
        if (!reported) continue; // nothing reported: no row, as before
        if (local < 0) local = book.period(p.period_id, p.period_plan, start, end);
        out.add(org, programId, frameworkId, local, ts, te, metrics);
        wrote = true;
      }
    }
    if (!wrote) rowless.push(frameworkId ?? programId);
  }
  return { items: list.length, cursor, programIds, rowlessIds: rowless, values };
}
