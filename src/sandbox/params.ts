// The query parameters the consumption and listing endpoints share, checked as the API checks them,
// and cursor paging.

import { earliestAllowedFrom } from '../contract/api.js';
import { floorToGranularity, GRANULARITIES, type Granularity } from '../domain/granularity.js';
import type { QueryWindow } from './consumption.js';
import { hashString } from './hash.js';
import { isoSeconds } from './json.js';
import { ApiError, bad, type RouteContext } from './route.js';
import type { Metric } from './usage.js';

/** Date-times as the API accepts them: RFC 3339, seconds and fraction optional. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

// ---- parameters -------------------------------------------------------------------------------

/** A list parameter, repeated or comma-separated (or both); undefined when absent. */
export function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const raw = q.getAll(name);
  if (raw.length === 0) return undefined;
  return [
    ...new Set(
      raw
        .flatMap((v) => v.split(','))
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  ];
}

export function intParam(
  q: URLSearchParams,
  name: string,
  range: { min: number; max: number; default: number },
): number {
  const v = q.get(name);
  if (v === null) return range.default;
  const n = /^\d{1,9}$/.test(v) ? Number(v) : NaN;
  if (!(n >= range.min && n <= range.max)) throw bad(`${name} must be an integer from ${range.min} to ${range.max}`);
  return n;
}

export function boolParam(q: URLSearchParams, name: string): boolean {
  const v = q.get(name);
  if (v === null || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw bad(`${name} must be true or false`);
}

function dateParam(q: URLSearchParams, name: string): number {
  const v = q.get(name);
  if (v === null || v === '') throw bad(`${name} is required (an ISO 8601 date-time)`);
  const t = DATE_TIME.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(t)) throw bad(`${name} must be an ISO 8601 date-time, got '${v}'`);
  return t;
}

export function metricsParam(
  q: URLSearchParams,
  allowed: readonly string[],
  all: readonly string[],
): Metric[] | undefined {
  const list = listParam(q, 'metrics');
  if (list === undefined) return undefined;
  if (list.length === 0) throw bad('metrics must name at least one metric');
  for (const m of list) {
    if (!allowed.includes(m))
      throw bad(all.includes(m) ? `metric '${m}' is not supported by this endpoint` : `unknown metric '${m}'`);
  }
  return list as Metric[];
}

export function windowParams(ctx: RouteContext): QueryWindow {
  const g = ctx.query.get('granularity');
  if (g === null || g === '') throw bad('granularity is required (hourly, daily or monthly)');
  if (!(GRANULARITIES as readonly string[]).includes(g))
    throw bad(`granularity must be hourly, daily or monthly, got '${g}'`);
  const granularity = g as Granularity;
  const from = floorToGranularity(dateParam(ctx.query, 'from'), granularity);
  const to = floorToGranularity(dateParam(ctx.query, 'to'), granularity);
  if (from >= to) throw bad('from must be before to once both are rounded down to the granularity');
  return { granularity, from, to, now: ctx.now };
}

/** 406 when `from` reaches further back than the granularity's window at the current clock. */
export function checkLookBack(w: QueryWindow): void {
  const earliest = earliestAllowedFrom(w.now, w.granularity);
  if (w.from < earliest) {
    throw new ApiError(
      406,
      'range_out_of_bounds',
      `from must not be earlier than ${isoSeconds(earliest)} for ${w.granularity} granularity`,
    );
  }
}

// ---- paging -----------------------------------------------------------------------------------

/**
 * One page after `cursor` (the id of the previous page's last item). A non-last page carries a
 * cursor; the last page, depending on the query, carries none or one that yields an empty page.
 */
export function paginate<T>(
  ctx: RouteContext,
  items: readonly T[],
  idOf: (t: T) => string,
  limit: number,
): { page: T[]; cursor?: string } {
  const cursor = ctx.query.get('cursor');
  let start = 0;
  if (cursor !== null && cursor !== '') {
    const i = items.findIndex((x) => idOf(x) === cursor);
    if (i < 0) throw bad(`unknown cursor '${cursor}'`);
    start = i + 1;
  }
  const page = items.slice(start, start + limit);
  const lastItem = page[page.length - 1];
  if (lastItem === undefined) return { page };
  if (start + limit < items.length || trailingCursor(ctx)) return { page, cursor: idOf(lastItem) };
  return { page };
}

function trailingCursor(ctx: RouteContext): boolean {
  // The query as meant, not as spelled: repeated and comma-separated lists are the same query.
  const names = [...new Set(ctx.query.keys())].filter((k) => k !== 'cursor').sort();
  const parts = names.map(
    (k) =>
      `${k}=${ctx.query
        .getAll(k)
        .flatMap((v) => v.split(','))
        .join(',')}`,
  );
  return (hashString(`${ctx.world.seed}|${ctx.template}|${ctx.params.join('/')}|${parts.join('&')}`) & 1) === 1;
}

export function withCursor(body: Record<string, unknown>, cursor: string | undefined): Record<string, unknown> {
  return cursor === undefined ? body : { ...body, pagination: { cursor } };
}
