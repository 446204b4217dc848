// Reading a consumption page into its rows, strictly (ARCHITECTURE.md, "Strict pages", "What is
// refused"): any leaf not of its documented type refuses the page, naming the first offending path. A
// page is scanned from its bytes (scanPage.ts); what the scan cannot read exactly goes the general way
// here: its bytes checked first (contract/jsonText.ts: UTF-8, JSON, no key twice in an object), then
// JSON.parse, or lossless-json when a number needs it (needsLossless.ts), and a strict walk of the
// objects. Both ways keep one contract: the scan accepts a page only when this way gives the same rows.
import { isLosslessNumber, parse as losslessParse } from 'lossless-json';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { checkJsonText, realInstant } from '../contract/jsonText.js';
import type { Source } from '../domain/granularity.js';
import { counterProblem, firstOffence, isStoredText, type Offence } from './firstOffence.js';
import { needsLossless } from './needsLossless.js';
import { METRIC_COLUMNS, PageRows, int64, type Int64 } from './pageRows.js';
import { scanPage } from './scanPage.js';

const METRIC_INDEX = new Map(METRIC_COLUMNS.map((m, i) => [m, i]));
const FRAMEWORK_METRICS = new Set<string>(V2_FRAMEWORK_METRICS);
const PROGRAM_METRICS = new Set<string>([...V2_PROGRAM_METRICS, ...V1_METRICS]);
const V1_FIELDS = V1_METRICS.map((m) => [m, METRIC_INDEX.get(m)!] as const);

/** A page departed from its documented shape; the caller names the first offending path. */
export class PageShapeError extends Error {
  constructor(readonly offence: Offence) {
    super(`${offence.path}: ${offence.problem}`);
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && isStoredText(v);

/** A counter (a number when safe), or undefined when it is not a JSON integer in [0, 2^63-1]; -0 is negative. */
function counter(v: unknown): Int64 | undefined {
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 && !Object.is(v, -0) ? v : undefined;
  if (isLosslessNumber(v)) return counterProblem(v) === null ? int64(BigInt(v.value)) : undefined;
  return undefined;
}

/** Time strings the general way has read, each converted once. */
const TIMES = new Map<string, Int64 | null>();

/** A time string as microseconds since the epoch, or null unless it is a real instant written as RFC 3339 with a zone. */
function time(s: unknown): Int64 | null {
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

/**
 * Reads one consumption page into its rows, ready to be staged. Throws PageShapeError (naming the first
 * offending path) when any leaf is not of its documented type, or when a bucket reports a metric the
 * request did not ask for, or the same metric twice. A page is scanned from its bytes (scanPage.ts); one
 * the scan does not read exactly is parsed and walked as objects, which gives the same rows or names the
 * offence.
 */
export function readPage(source: Source, page: Buffer | string): PageRows {
  const bytes = typeof page === 'string' ? Buffer.from(page, 'utf8') : page;
  return scanPage(source, bytes) ?? parsePage(source, bytes);
}

/**
 * The general way: the page's bytes checked (UTF-8, JSON, no key twice), parsed as objects (JSON.parse,
 * or lossless-json for numbers it cannot keep) and walked strictly.
 */
export function parsePage(source: Source, page: Buffer | string): PageRows {
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
  return new PageWalk(source, json).page(body);
}

/** The strict walk of a parsed page into its rows. */
class PageWalk {
  private readonly out: PageRows;
  private readonly key: 'frameworks' | 'programs';
  private readonly framework: boolean;
  private readonly allowed: ReadonlySet<string>;

  constructor(
    private readonly source: Source,
    private readonly json: string,
  ) {
    this.framework = source === 'v2_frameworks';
    this.out = new PageRows(this.framework ? V2_FRAMEWORK_METRICS.length : METRIC_COLUMNS.length);
    this.key = this.framework ? 'frameworks' : 'programs';
    this.allowed = this.framework ? FRAMEWORK_METRICS : PROGRAM_METRICS;
  }

  /** Refuses the page: the walk knows only that it departs from its shape; firstOffence names where. */
  private refuse(): never {
    throw new PageShapeError(
      firstOffence(this.source, this.json) ?? { path: '$', problem: 'the page does not have the documented shape' },
    );
  }

  page(body: unknown): PageRows {
    const out = this.out;
    if (!isObj(body)) return this.refuse();
    const pagination = body.pagination;
    const rawCursor = isObj(pagination) ? pagination.cursor : undefined;
    if (rawCursor !== undefined && rawCursor !== null && typeof rawCursor !== 'string') {
      throw new PageShapeError({
        path: '$.pagination.cursor',
        problem: `expected a string or null, got ${isLosslessNumber(rawCursor) ? rawCursor.value : JSON.stringify(rawCursor)}`,
      });
    }
    out.cursor = rawCursor ?? null;
    const list = body[this.key];
    if (list === undefined || list === null) return out;
    if (!Array.isArray(list)) return this.refuse();
    for (let i = 0; i < list.length; i++) this.item(i, list[i]);
    out.items = list.length;
    return out;
  }

  private item(i: number, item: unknown): void {
    const out = this.out;
    if (!isObj(item) || !isId(item.program_id)) return this.refuse();
    let frameworkId: string | null = null;
    if (this.framework) {
      if (!isId(item.framework_id)) return this.refuse();
      frameworkId = item.framework_id;
    }
    out.programIds.push(item.program_id);
    out.frameworkIds.push(frameworkId);
    const periods = item.periods;
    if (!Array.isArray(periods)) return this.refuse();
    for (let j = 0; j < periods.length; j++) this.period(i, j, periods[j]);
  }

  private period(i: number, j: number, p: unknown): void {
    const out = this.out;
    if (!isObj(p) || !isId(p.period_id) || !isId(p.period_plan)) return this.refuse();
    const start = time(p.period_start);
    const end = p.period_end === undefined || p.period_end === null ? null : time(p.period_end);
    if (start === null || (end === null && p.period_end !== undefined && p.period_end !== null)) return this.refuse();
    const consumption = p.consumption;
    if (!Array.isArray(consumption)) return this.refuse();
    const period = out.periodIds.length;
    out.periodIds.push(p.period_id);
    out.periodPlans.push(p.period_plan);
    out.periodStarts.push(start);
    out.periodEnds.push(end);
    for (let k = 0; k < consumption.length; k++) this.bucket(i, j, k, period, consumption[k]);
  }

  /** Bucket k of period j (numbered `period` in the page) of item i. */
  private bucket(i: number, j: number, k: number, period: number, b: unknown): void {
    if (!isObj(b)) return this.refuse();
    const ts = time(b.timeframe_start);
    const te = time(b.timeframe_end);
    if (ts === null || te === null) return this.refuse();
    const r = this.out.beginRow();
    const reported =
      this.source === 'v1_programs'
        ? this.v1Fields(r, b)
        : this.metrics(r, b, () => `$.${this.key}[${i}].periods[${j}].consumption[${k}]`);
    if (reported > 0) this.out.finishRow(r, i, period, ts, te, reported); // nothing reported: no row
  }

  /** A v1 bucket's metric fields into row r; returns how many were non-zero. */
  private v1Fields(r: number, b: Obj): number {
    let reported = 0;
    for (const [name, col] of V1_FIELDS) {
      const raw = b[name];
      if (raw === undefined || raw === null) continue;
      const n = counter(raw);
      if (n === undefined) return this.refuse();
      if (n === 0) continue;
      this.out.setMetric(r, col, n);
      reported++;
    }
    return reported;
  }

  /** A v2 bucket's metrics (at `bucketPath`) into row r; returns how many were non-zero. */
  private metrics(r: number, b: Obj, bucketPath: () => string): number {
    const metrics = b.metrics;
    if (!Array.isArray(metrics)) return this.refuse();
    let reported = 0;
    let named = 0; // the columns named in this bucket, as bits: a metric given twice is refused whatever its values
    for (let l = 0; l < metrics.length; l++) {
      const m: unknown = metrics[l];
      if (!isObj(m) || !isId(m.metric_name)) return this.refuse();
      const n = counter(m.value);
      if (n === undefined) return this.refuse();
      const col = this.allowed.has(m.metric_name) ? METRIC_INDEX.get(m.metric_name) : undefined;
      const path = () => `${bucketPath()}.metrics[${l}]`;
      if (col === undefined)
        throw new PageShapeError({
          path: `${path()}.metric_name`,
          problem: `${m.metric_name} is not a metric this request asked for`,
        });
      if (named & (1 << col))
        throw new PageShapeError({ path: path(), problem: `${m.metric_name} is given twice in one bucket` });
      named |= 1 << col;
      if (n === 0) continue; // an explicit 0 is stored as absent: the same usage gives the same rows
      this.out.setMetric(r, col, n);
      reported++;
    }
    return reported;
  }
}
