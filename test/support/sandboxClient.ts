// A minimal client for the sandbox tests: real HTTP with fetch, bodies parsed by lossless-json with
// every integer as a bigint, so no value is rounded on the way in.

import { isInteger, parse } from 'lossless-json';
import type { Sandbox } from '../../src/sandbox/server.js';
import type { TruthRow } from '../../src/sandbox/truth.js';

export type Params = Record<string, string | number | readonly string[] | undefined>;

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export function url(sb: Sandbox, path: string, params: Params = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v) q.append(k, x);
    else q.append(k, String(v));
  }
  const s = q.toString();
  return `${sb.baseUrl}${path}${s ? `?${s}` : ''}`;
}

export function parseExact(text: string): unknown {
  return parse(text, null, (literal: string) => (isInteger(literal) ? BigInt(literal) : Number(literal)));
}

export async function call(
  sb: Sandbox,
  path: string,
  params: Params = {},
  opts: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const key = opts.key === undefined ? sb.apiKey : opts.key;
  const headers: Record<string, string> = {
    ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
    ...opts.headers,
  };
  const res = await fetch(url(sb, path, params), { headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? parseExact(text) : undefined };
}

export const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 19) + 'Z';
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** A bucket of a consumption item: v2 lists its metrics, v1 names each as a key. */
export type ApiBucket = {
  timeframe_start: string;
  timeframe_end: string;
  metrics?: { metric_name: string; value: bigint }[];
} & Record<string, unknown>;
/** An item of a listing or consumption page as the sandbox answers it (values exact, as bigint). */
export type ApiItem = {
  program_id: string;
  framework_id?: string;
  periods: { period_id: string; period_plan: string; consumption: ApiBucket[] }[];
} & Record<string, unknown>;

/** Every page of a consumption or list endpoint, following cursors to the end. */
export async function allPages(
  sb: Sandbox,
  path: string,
  listKey: string,
  params: Params,
  opts: { key?: string } = {},
): Promise<{ pages: unknown[][]; items: ApiItem[]; trailingEmpty: boolean }> {
  const pages: unknown[][] = [];
  let cursor: string | undefined;
  let trailingEmpty = false;
  for (let guard = 0; guard < 10_000; guard++) {
    const r = await call(sb, path, { ...params, cursor }, opts);
    if (r.status !== 200) throw new Error(`${path} answered ${r.status}: ${r.text}`);
    const list = r.body[listKey] as unknown[];
    pages.push(list);
    if (list.length === 0) {
      if (r.body.pagination !== undefined) throw new Error('an empty page carries a cursor');
      trailingEmpty = pages.length > 1;
      break;
    }
    if (!r.body.pagination) break;
    cursor = r.body.pagination.cursor as string;
  }
  return { pages, items: pages.flat() as ApiItem[], trailingEmpty };
}

/** A consumption row as the API answered it: the truth's row without the organization. */
export type Row = Omit<TruthRow, 'org_id'>;

/** Flattens consumption items (programs or frameworks) into rows; v2 explicit zeros are dropped unless `keepZeros`. */
export function rowsOf(items: ApiItem[], keepZeros: boolean): Row[] {
  const rows: Row[] = [];
  for (const item of items) {
    for (const p of item.periods) {
      for (const c of p.consumption) {
        const base = {
          program_id: item.program_id,
          ...(item.framework_id ? { framework_id: item.framework_id } : {}),
          period_id: p.period_id,
          period_plan: p.period_plan,
          timeframe_start: Date.parse(c.timeframe_start),
          timeframe_end: Date.parse(c.timeframe_end),
        };
        if (Array.isArray(c.metrics)) {
          for (const m of c.metrics)
            if (keepZeros || m.value !== 0n) rows.push({ ...base, metric: m.metric_name, value: m.value });
        } else {
          for (const [k, v] of Object.entries(c))
            if (k !== 'timeframe_start' && k !== 'timeframe_end') rows.push({ ...base, metric: k, value: v as bigint });
        }
      }
    }
  }
  return rows;
}

export interface KeyFields {
  program_id: string;
  framework_id?: string;
  period_id: string;
  timeframe_start: number;
  timeframe_end: number;
  metric: string;
}

export function rowKey(r: KeyFields): string {
  return [r.program_id, r.framework_id ?? '', r.period_id, r.timeframe_start, r.timeframe_end, r.metric].join('|');
}

/** Rows as a map by key; throws on a duplicate key (a pair straddling a plan change differs by period). */
export function byKey(rows: readonly (KeyFields & { value: bigint })[]): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const r of rows) {
    const k = rowKey(r);
    if (m.has(k)) throw new Error(`duplicate row ${k}`);
    m.set(k, r.value);
  }
  return m;
}
