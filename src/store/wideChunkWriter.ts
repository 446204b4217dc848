// Consumption pages and long rows turned into the batch's wide staging rows (one per bucket and plan
// period, a BIGINT column per metric), written into DuckDB data chunks for the appender.
//
// A page is read by pageScan.ts from its bytes. What the scan cannot read exactly goes the general way
// here: its bytes checked first (contract/jsonText.ts: UTF-8, JSON, no key twice in an object), then
// JSON.parse, unless the text holds a number literal that JSON.parse could not keep exactly or could
// not tell apart (16+ digits, a fraction or exponent, a minus sign), which lossless-json reads. Checks are
// strict, never a filter (ARCHITECTURE.md, "Strict pages", "What is refused"): any leaf not of its
// documented type refuses the page, and pageCheck.ts names the first offending path. Every path keeps
// one contract: the scan accepts a page only when this way gives the same rows.
import { BIGINT, DuckDBDataChunk, INTEGER, TIMESTAMPTZ, type DuckDBAppender } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { endianness } from 'node:os';
import { isLosslessNumber, parse as losslessParse, type LosslessNumber } from 'lossless-json';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { checkJsonText, realInstant } from '../contract/jsonText.js';
import { counterProblem, firstOffence, isStoredText, type Offence } from '../page/firstOffence.js';
import { PageRows, type Int64 } from '../page/pageRows.js';
import { scanPage } from '../page/scanPage.js';
import type { PageSource } from './types.js';

/** The metric columns of staging_usage_create.sql and usage_program_buckets, in order. */
export const METRIC_COLUMNS: readonly string[] = [...V2_PROGRAM_METRICS, ...V1_METRICS];
const METRIC_INDEX = new Map(METRIC_COLUMNS.map((m, i) => [m, i]));
const FRAMEWORK_METRICS = new Set<string>(V2_FRAMEWORK_METRICS);
const PROGRAM_METRICS = new Set<string>([...V2_PROGRAM_METRICS, ...V1_METRICS]);
const V1_FIELDS = V1_METRICS.map((m) => [m, METRIC_INDEX.get(m)!] as const);

const KEY_COLUMNS = 4; // item, period_local, timeframe_start, timeframe_end
const TYPES = [INTEGER, INTEGER, TIMESTAMPTZ, TIMESTAMPTZ, ...METRIC_COLUMNS.map(() => BIGINT)];
/** The columns of staging_rows and of staging_items (staging_usage_create.sql). */
export const STAGING_COLUMNS = TYPES.length;
export const ITEM_COLUMNS = 4; // item, org_id, program_id, framework_id
const CHUNK_ROWS = 2048; // DuckDB's standard vector size
// The writer lays int64 cells and validity words out as DuckDB does on a little-endian machine.
if (endianness() !== 'LE') throw new Error('usage-pipeline writes DuckDB vectors in little-endian order; this machine is big-endian');

/**
 * Whether the text holds a number literal JSON.parse would round (16+ digits) or could not tell from an
 * integer (1.0, 1e3), or a negative one (-0). Every number a page's walk accepts is an object member's
 * value, so only what follows a ':' (and optional whitespace) is looked at; a number elsewhere (in an
 * array) is refused by the walk whichever parser read it. A ':' inside a string may send a page down the
 * exact path needlessly (harmless). A hand-written scan: the regular expression it replaces cost about
 * 40 % of JSON.parse's time on a page (BENCHMARKS.md, "Fewer queries and less work per page (2026-11-23)"); indexOf finds the colons natively.
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
  /** Microseconds since the epoch. */
  start: Int64;
  end: Int64 | null;
}

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
  add(org: string | null, program: string, framework: string | null, period: number, start: Int64, end: Int64, metrics: ArrayLike<Int64 | null>): void {
    this.keys.see(framework ?? program, period, start);
    if (program !== this.program || framework !== this.framework || org !== this.org) this.newItem(org, program, framework);
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
  private lastStart: Int64 = -1;

  constructor(private readonly book: PeriodBook) {}

  see(id: string, period: number, start: Int64): void {
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
    if (start <= this.lastStart) this.suspects.add(id);
    this.lastStart = start;
  }
}

/** Time strings the general way has read, each converted once. */
const TIMES = new Map<string, Int64 | null>();

/** The batch's plan periods, numbered in the order they are first staged. */
export class PeriodBook {
  readonly periods: StagedPeriod[] = [];
  private readonly byKey = new Map<string, StagedPeriod>();
  /** Periods not yet written to staging_periods. */
  fresh: StagedPeriod[] = [];

  /** A time string as microseconds since the epoch, or null unless it is a real instant written as RFC 3339 with a zone. */
  static time(s: unknown): Int64 | null {
    if (typeof s !== 'string') return null;
    let v = TIMES.get(s);
    if (v === undefined) {
      const micros = realInstant(s);
      v = micros === null ? null : int64(micros);
      if (TIMES.size > 100_000) TIMES.clear();
      TIMES.set(s, v);
    }
    return v;
  }

  fromDate(d: Date): Int64 {
    const ms = d.getTime();
    if (!Number.isFinite(ms)) throw new RangeError('invalid Date (NaN) where a timestamp was expected');
    return int64(BigInt(ms) * 1000n);
  }

  period(id: string, plan: string, start: Int64, end: Int64 | null): number {
    const key = `${id}\u0000${plan}\u0000${start}\u0000${end ?? ''}`;
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

/** A safe integer as a number, anything larger as the bigint. */
function int64(v: bigint): Int64 {
  return v >= -9007199254740991n && v <= 9007199254740991n ? Number(v) : v;
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
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && isStoredText(v);

/** A counter (a number when safe), or undefined when it is not a JSON integer in [0, 2^63-1]; -0 is negative. */
function counter(v: unknown): Int64 | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0) ? v : undefined;
  if (isLosslessNumber(v)) return counterProblem(v) === null ? int64(BigInt((v as LosslessNumber).value)) : undefined;
  return undefined;
}

/**
 * Reads one consumption page into its rows, ready to be staged. Throws PageShapeError (naming the first
 * offending path) when any leaf is not of its documented type, or when a bucket reports a metric the
 * request did not ask for, or the same metric twice. A page is scanned from its bytes (pageScan.ts); one
 * the scan does not read exactly is parsed and walked as objects, which gives the same rows or names the
 * offence.
 */
export function readPage(source: PageSource, page: Buffer | string): PageRows {
  const bytes = typeof page === 'string' ? Buffer.from(page, 'utf8') : page;
  return scanPage(source, bytes) ?? parsePage(source, bytes);
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
      local = book.period(page.periodIds[period]!, page.periodPlans[period]!, page.periodStarts[period]!, page.periodEnds[period]!);
      locals[period] = local;
    }
    for (let m = 0; m < metrics.length; m++) metrics[m] = page.metric(r, m);
    out.add(org, page.programIds[item]!, page.frameworkIds[item]!, local, page.start(r), page.end(r), metrics);
    withRows[item] = 1;
  }
  const rowless: string[] = [];
  for (let i = 0; i < withRows.length; i++) if (withRows[i] === 0) rowless.push(page.frameworkIds[i] ?? page.programIds[i]!);
  return { items: page.items, cursor: page.cursor, programIds: page.programIds, rowlessIds: rowless, values: page.values };
}

/**
 * The general way: the page's bytes checked (UTF-8, JSON, no key twice), parsed as objects (JSON.parse,
 * or lossless-json for numbers it cannot keep) and walked strictly.
 */
export function parsePage(source: PageSource, page: Buffer | string): PageRows {
  const bytes = typeof page === 'string' ? Buffer.from(page, 'utf8') : page;
  const offence = checkJsonText(bytes);
  if (offence !== null) throw new PageShapeError(offence);
  const json = bytes.toString('utf8'); // well-formed UTF-8 by now: nothing is replaced
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
  const isFramework = source === 'v2_frameworks';
  const out = new PageRows(isFramework ? V2_FRAMEWORK_METRICS.length : METRIC_COLUMNS.length);
  const key = isFramework ? 'frameworks' : 'programs';
  const pagination = body.pagination;
  const rawCursor = isObj(pagination) ? pagination.cursor : undefined;
  if (rawCursor !== undefined && rawCursor !== null && typeof rawCursor !== 'string') {
    throw new PageShapeError({ path: '$.pagination.cursor', problem: `expected a string or null, got ${isLosslessNumber(rawCursor) ? rawCursor.value : JSON.stringify(rawCursor)}` });
  }
  out.cursor = rawCursor ?? null;
  const list = body[key];
  if (list === undefined || list === null) return out;
  if (!Array.isArray(list)) return refuse();

  const allowed = isFramework ? FRAMEWORK_METRICS : PROGRAM_METRICS;
  for (let i = 0; i < list.length; i++) {
    const item: unknown = list[i];
    if (!isObj(item) || !isId(item.program_id)) return refuse();
    let frameworkId: string | null = null;
    if (isFramework) {
      if (!isId(item.framework_id)) return refuse();
      frameworkId = item.framework_id;
    }
    out.programIds.push(item.program_id);
    out.frameworkIds.push(frameworkId);
    const periods = item.periods;
    if (!Array.isArray(periods)) return refuse();
    for (const p of periods as unknown[]) {
      if (!isObj(p) || !isId(p.period_id) || !isId(p.period_plan)) return refuse();
      const start = PeriodBook.time(p.period_start);
      const end = p.period_end === undefined || p.period_end === null ? null : PeriodBook.time(p.period_end);
      if (start === null || (end === null && p.period_end !== undefined && p.period_end !== null)) return refuse();
      const consumption = p.consumption;
      if (!Array.isArray(consumption)) return refuse();
      const period = out.periodIds.length;
      out.periodIds.push(p.period_id);
      out.periodPlans.push(p.period_plan);
      out.periodStarts.push(start);
      out.periodEnds.push(end);
      for (const b of consumption as unknown[]) {
        if (!isObj(b)) return refuse();
        const ts = PeriodBook.time(b.timeframe_start);
        const te = PeriodBook.time(b.timeframe_end);
        if (ts === null || te === null) return refuse();
        const r = out.beginRow();
        let reported = 0;
        if (source === 'v1_programs') {
          for (const [name, col] of V1_FIELDS) {
            const raw = b[name];
            if (raw === undefined || raw === null) continue;
            const n = counter(raw);
            if (n === undefined) return refuse();
            if (n === 0) continue;
            out.setMetric(r, col, n);
            reported++;
          }
        } else {
          const metrics = b.metrics;
          if (!Array.isArray(metrics)) return refuse();
          let named = 0; // the columns named in this bucket, as bits: a metric given twice is refused whatever its values
          for (let l = 0; l < metrics.length; l++) {
            const m: unknown = metrics[l];
            if (!isObj(m) || !isId(m.metric_name)) return refuse();
            const n = counter(m.value);
            if (n === undefined) return refuse();
            const col = allowed.has(m.metric_name) ? METRIC_INDEX.get(m.metric_name) : undefined;
            const path = () => `$.${key}[${i}].periods[${periods.indexOf(p)}].consumption[${consumption.indexOf(b)}].metrics[${l}]`;
            if (col === undefined) throw new PageShapeError({ path: `${path()}.metric_name`, problem: `${m.metric_name} is not a metric this request asked for` });
            if (named & (1 << col)) throw new PageShapeError({ path: path(), problem: `${m.metric_name} is given twice in one bucket` });
            named |= 1 << col;
            if (n === 0) continue; // an explicit 0 is stored as absent: the same usage gives the same rows
            out.setMetric(r, col, n);
            reported++;
          }
        }
        if (reported > 0) out.finishRow(r, i, period, ts, te, reported); // nothing reported: no row, as before
      }
    }
  }
  out.items = list.length;
  return out;
}
