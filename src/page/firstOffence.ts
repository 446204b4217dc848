// Names the first offending place of a consumption page the general way (readPage.ts) refused, so that
// the refusal says where and why. Runs only on a refused page, so its cost does not matter; it reads the
// body losslessly so that 2^63 is seen as 2^63, not as a rounded double.
import { isLosslessNumber, parse } from 'lossless-json';
import { V1_METRICS } from '../contract/api.js';
import { realInstant } from '../contract/jsonText.js';
import type { Source } from '../domain/granularity.js';

export interface Offence {
  /** A JSONPath-like location, e.g. $.programs[3].periods[0].consumption[5].metrics[1].value */
  path: string;
  problem: string;
}

const INT64_MAX = 2n ** 63n - 1n;
const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Whether text from a page may be stored: no control character (below U+0020), no surrogate without its pair
 *  (only a \u escape can write one, and it is not Unicode text). */
export function isStoredText(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || isLow(c)) return false;
    if (isHigh(c)) {
      if (!isLow(s.charCodeAt(i + 1))) return false;
      i++;
    }
  }
  return true;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const show = (v: unknown): string => (isLosslessNumber(v) ? v.value : (JSON.stringify(v) ?? String(v)));

function id(v: unknown): string | null {
  if (typeof v !== 'string' || v.length === 0) return `expected a non-empty string id, got ${show(v)}`;
  return isStoredText(v) ? null : `expected text without control characters or lone surrogates, got ${show(v)}`;
}

function time(v: unknown): string | null {
  return typeof v === 'string' && realInstant(v) !== null
    ? null
    : `expected an ISO 8601 date-time with a zone naming a real instant (YYYY-MM-DDTHH:MM:SSZ), got ${show(v)}`;
}

/** A usage counter: a JSON integer literal in [0, 2^63-1]. */
export function counterProblem(v: unknown): string | null {
  if (!isLosslessNumber(v)) return `expected a non-negative integer, got ${show(v)}`;
  if (!/^-?\d+$/.test(v.value)) return `expected an integer, got ${v.value}`;
  // -0 is a negative number as written: a billing pipeline does not guess it meant 0.
  if (v.value.startsWith('-')) return `expected a non-negative integer, got ${v.value}`;
  const n = BigInt(v.value);
  if (n > INT64_MAX) return `${v.value} is beyond the int64 range`;
  return null;
}

/** The first place, in document order, where the page departs from its documented shape; null if none. */
export function firstOffence(source: Source, json: string): Offence | null {
  let body: unknown;
  try {
    body = parse(json);
  } catch (err) {
    return { path: '$', problem: `not JSON: ${(err as Error).message}` };
  }
  const key = source === 'v2_frameworks' ? 'frameworks' : 'programs';
  if (!isObj(body)) return { path: '$', problem: 'expected an object' };
  const list = body[key];
  if (!Array.isArray(list)) return { path: `$.${key}`, problem: 'expected an array' };
  const at = (path: string, problem: string | null): Offence | null => (problem ? { path, problem } : null);
  for (const [i, item] of list.entries()) {
    const ip = `$.${key}[${i}]`;
    if (!isObj(item)) return { path: ip, problem: 'expected an object' };
    const bad =
      at(`${ip}.program_id`, id(item.program_id)) ??
      (source === 'v2_frameworks' ? at(`${ip}.framework_id`, id(item.framework_id)) : null);
    if (bad) return bad;
    if (!Array.isArray(item.periods)) return { path: `${ip}.periods`, problem: 'expected an array' };
    for (const [j, p] of item.periods.entries()) {
      const pp = `${ip}.periods[${j}]`;
      if (!isObj(p)) return { path: pp, problem: 'expected an object' };
      const pbad =
        at(`${pp}.period_id`, id(p.period_id)) ??
        at(`${pp}.period_plan`, id(p.period_plan)) ??
        at(`${pp}.period_start`, time(p.period_start)) ??
        (p.period_end === undefined || p.period_end === null ? null : at(`${pp}.period_end`, time(p.period_end)));
      if (pbad) return pbad;
      if (!Array.isArray(p.consumption)) return { path: `${pp}.consumption`, problem: 'expected an array' };
      for (const [k, b] of p.consumption.entries()) {
        const bp = `${pp}.consumption[${k}]`;
        if (!isObj(b)) return { path: bp, problem: 'expected an object' };
        const bbad =
          at(`${bp}.timeframe_start`, time(b.timeframe_start)) ?? at(`${bp}.timeframe_end`, time(b.timeframe_end));
        if (bbad) return bbad;
        if (source === 'v1_programs') {
          for (const f of V1_METRICS) {
            if (b[f] === undefined || b[f] === null) continue;
            const vbad = at(`${bp}.${f}`, counterProblem(b[f]));
            if (vbad) return vbad;
          }
          continue;
        }
        if (!Array.isArray(b.metrics)) return { path: `${bp}.metrics`, problem: 'expected an array' };
        for (const [l, m] of b.metrics.entries()) {
          const mp = `${bp}.metrics[${l}]`;
          if (!isObj(m)) return { path: mp, problem: 'expected an object' };
          const mbad = at(`${mp}.metric_name`, id(m.metric_name)) ?? at(`${mp}.value`, counterProblem(m.value));
          if (mbad) return mbad;
        }
      }
    }
  }
  return null;
}
