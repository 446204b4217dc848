// Reading a consumption page into its rows, strictly (ARCHITECTURE.md, "Strict pages", "What is
// refused"): any leaf not of its documented type refuses the page, naming the first offending path. A
// page is scanned from its bytes (scanPage.ts); what the scan cannot read exactly goes the general way
// here: its bytes checked first (contract/jsonText.ts: UTF-8, JSON, no key twice in an object), then
// JSON.parse, or lossless-json when a number needs it (needsLossless.ts), and a strict walk of the
// objects. Both ways keep one contract: the scan accepts a page only when this way gives the same rows.
import { isLosslessNumber, parse as losslessParse, type LosslessNumber } from 'lossless-json';
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
  if (isLosslessNumber(v)) return counterProblem(v) === null ? int64(BigInt((v as LosslessNumber).value)) : undefined;
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
      const start = time(p.period_start);
      const end = p.period_end === undefined || p.period_end === null ? null : time(p.period_end);
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
        const ts = time(b.timeframe_start);
        const te = time(b.timeframe_end);
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
