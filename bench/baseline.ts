// The naive baseline the benchmark compares against, self-contained on purpose (it shares no code with
// the collector): one request at a time, no pacing, the API's default page sizes (limit omitted: 10
// programs, 100 frameworks), frameworks asked for 10 programs at a time (one programs page), follows
// every cursor to its end, JSON.parse, and one prepared INSERT per value into a DuckDB table of the same
// shape as usage_program / usage_framework (one transaction per page: the kinder form of the naive way).
// It only waits when the API says 429, for as long as Retry-After says, so that it is not killed by the limits.
// Zeros are skipped as the collector skips them, so both load the same rows.
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance, type DuckDBConnection, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { request } from 'undici';
import { CONSUMPTION_PATHS, V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../src/contract/api.js';
import type { BenchWindow } from './minimum.js';

/** Programs per frameworks request: one default-size programs page. */
export const NAIVE_FRAMEWORK_BATCH = 10;
const MAX_429_RETRIES = 20;

export interface BaselineOptions {
  baseUrl: string;
  apiKey: string;
  dbPath: string;
  windows: readonly BenchWindow[];
  /** Stop each organization after this many programs (a subset, for extrapolation). */
  programsPerOrg?: number;
}

export interface BaselineResult {
  requests: number;
  throttled: number;
  /** Non-empty pages. */
  pages: number;
  rows: number;
  /** Time spent waiting for and parsing answers, and inserting rows (they add up to the wall time). */
  httpS: number;
  insertS: number;
  programs: number;
}

type Json = Record<string, unknown>;
interface Period {
  period_id: string;
  period_plan: string;
  period_start: string;
  period_end?: string;
  consumption: (Json & {
    timeframe_start: string;
    timeframe_end: string;
    metrics?: { metric_name: string; value: number }[];
  })[];
}

// Beside this file when run from source; from dist/bench/, the source folder's copy (tsc copies no .sql).
const SQL_PATH =
  [new URL('./baseline.sql', import.meta.url), new URL('../../bench/baseline.sql', import.meta.url)]
    .map((u) => fileURLToPath(u))
    .find((p) => existsSync(p)) ?? 'bench/baseline.sql';

/** The statements of baseline.sql: the schema (before the first marker) and each `-- @name` statement. */
export function baselineSql(text = readFileSync(SQL_PATH, 'utf8')): { schema: string; named: Record<string, string> } {
  const [schema, ...rest] = text.split(/^-- @/m);
  const named: Record<string, string> = {};
  for (const part of rest) {
    const nl = part.indexOf('\n');
    named[part.slice(0, nl).trim()] = part.slice(nl + 1).trim();
  }
  return { schema: schema ?? '', named };
}

export async function runBaseline(opts: BaselineOptions): Promise<BaselineResult> {
  const out: BaselineResult = { requests: 0, throttled: 0, pages: 0, rows: 0, httpS: 0, insertS: 0, programs: 0 };
  const sql = baselineSql();
  const instance = await DuckDBInstance.create(opts.dbPath, {
    autoinstall_known_extensions: 'false',
    autoload_known_extensions: 'true',
  });
  const conn = await instance.connect();
  await conn.run(sql.schema);
  const insertProgram = await conn.prepare(sql.named.insert_program as string);
  const insertFramework = await conn.prepare(sql.named.insert_framework as string);
  const { get, insertPage, pages } = naive(opts, out, conn);
  const stamp = { runId: 'naive', collectedAt: new Date().toISOString() };
  const flatten = (prefix: (string | null)[], periods: Period[], v1: boolean, granularityFirst: string | null) =>
    rowsOf(stamp, prefix, periods, v1, granularityFirst);

  try {
    for (const w of opts.windows) {
      const orgs = ((await get('/users/me/organizations', {}))?.organizations ?? []) as { id: string }[];
      const window = { granularity: w.granularity, from: w.from, to: w.to };
      for (const { id: org } of orgs) {
        let seen = 0;
        for await (const items of pages(
          CONSUMPTION_PATHS.v1_programs,
          { ...window, org_id: org, metrics: V1_METRICS.join(',') },
          'programs',
        )) {
          if (items === null) break;
          const rows = items.flatMap((it) =>
            flatten(['v1', w.granularity, org, String(it.program_id)], it.periods as Period[], true, null),
          );
          await insertPage(insertProgram, rows);
          seen += items.length;
          if (opts.programsPerOrg !== undefined && seen >= opts.programsPerOrg) break;
        }
        out.programs += seen;
        seen = 0;
        for await (const items of pages(
          CONSUMPTION_PATHS.v2_programs,
          { ...window, org_id: org, metrics: V2_PROGRAM_METRICS.join(',') },
          'programs',
        )) {
          if (items === null) break;
          const rows = items.flatMap((it) =>
            flatten(['v2', w.granularity, org, String(it.program_id)], it.periods as Period[], false, null),
          );
          await insertPage(insertProgram, rows);
          await naiveFrameworks({ pages, insertPage }, insertFramework, flatten, { window, org, w }, items);
          seen += items.length;
          if (opts.programsPerOrg !== undefined && seen >= opts.programsPerOrg) break;
        }
        out.programs += seen;
      }
    }
  } finally {
    insertProgram.destroySync();
    insertFramework.destroySync();
    conn.closeSync();
    instance.closeSync();
  }
  return out;
}

/** The frameworks of one page of v2 programs, NAIVE_FRAMEWORK_BATCH programs a request, inserted page by page. */
async function naiveFrameworks(
  { pages, insertPage }: Pick<ReturnType<typeof naive>, 'pages' | 'insertPage'>,
  insertFramework: DuckDBPreparedStatement,
  flatten: (
    prefix: (string | null)[],
    periods: Period[],
    v1: boolean,
    granularityFirst: string | null,
  ) => ReturnType<typeof rowsOf>,
  { window, org, w }: { window: Record<string, string>; org: string; w: BenchWindow },
  items: Json[],
): Promise<void> {
  const ids = items.map((it) => String(it.program_id));
  for (let i = 0; i < ids.length; i += NAIVE_FRAMEWORK_BATCH) {
    const batch = ids.slice(i, i + NAIVE_FRAMEWORK_BATCH).join(',');
    for await (const fws of pages(
      CONSUMPTION_PATHS.v2_frameworks,
      { ...window, program_ids: batch, metrics: V2_FRAMEWORK_METRICS.join(',') },
      'frameworks',
    )) {
      if (fws === null) break;
      const frows = fws.flatMap((it) =>
        flatten([org, String(it.program_id), String(it.framework_id)], it.periods as Period[], false, w.granularity),
      );
      await insertPage(insertFramework, frows);
    }
  }
}

/** The naive client's three moves: one GET (waiting out a 429), one page inserted row by row, every page of a query. */
function naive(opts: BaselineOptions, out: BaselineResult, conn: DuckDBConnection) {
  const base = opts.baseUrl.replace(/\/+$/, '');

  async function get(path: string, query: Record<string, string>): Promise<Json | null> {
    const url = `${base}${path}?${new URLSearchParams(query).toString()}`;
    const t0 = performance.now();
    try {
      for (let attempt = 0; ; attempt++) {
        out.requests++;
        const res = await request(url, {
          headers: { authorization: `Bearer ${opts.apiKey}`, accept: 'application/json' },
        });
        const text = await res.body.text();
        if (res.statusCode === 429 && attempt < MAX_429_RETRIES) {
          out.throttled++;
          await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
          continue;
        }
        if (res.statusCode === 403) return null; // the other API version
        if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${text.slice(0, 200)}`);
        return JSON.parse(text) as Json;
      }
    } finally {
      out.httpS += (performance.now() - t0) / 1000;
    }
  }

  async function insertPage(stmt: DuckDBPreparedStatement, rows: (string | number | bigint | null)[][]): Promise<void> {
    const t0 = performance.now();
    await conn.run('BEGIN TRANSACTION');
    for (const row of rows) {
      stmt.bind(row);
      await stmt.run();
    }
    await conn.run('COMMIT');
    out.rows += rows.length;
    out.insertS += (performance.now() - t0) / 1000;
  }

  /** Every page of a query, following cursors until the API gives none or an empty page. */
  async function* pages(path: string, query: Record<string, string>, key: string): AsyncGenerator<Json[] | null> {
    let cursor: string | undefined;
    for (;;) {
      const body = await get(path, cursor ? { ...query, cursor } : query);
      if (body === null) return yield null;
      const items = (body[key] ?? []) as Json[];
      if (items.length === 0) return;
      out.pages++;
      yield items;
      cursor = (body.pagination as { cursor?: string } | undefined)?.cursor;
      if (!cursor) return;
    }
  }

  return { get, insertPage, pages };
}

/** Rows of one item's periods: v1 buckets carry one field per metric, v2 a metrics array. */
function rowsOf(
  { runId, collectedAt }: { runId: string; collectedAt: string },
  prefix: (string | null)[],
  periods: Period[],
  v1: boolean,
  granularityFirst: string | null,
): (string | number | bigint | null)[][] {
  const rows: (string | number | bigint | null)[][] = [];
  for (const p of periods) {
    for (const b of p.consumption) {
      const values: [string, number][] = v1
        ? V1_METRICS.map((m) => [m, Number(b[m] ?? 0)])
        : (b.metrics ?? []).map((m) => [m.metric_name, m.value]);
      for (const [metric, value] of values) {
        if (value === 0) continue;
        rows.push([
          ...(granularityFirst !== null ? [granularityFirst] : []),
          ...prefix,
          p.period_id,
          p.period_plan,
          p.period_start,
          p.period_end ?? null,
          b.timeframe_start,
          b.timeframe_end,
          metric,
          BigInt(value),
          runId,
          collectedAt,
        ]);
      }
    }
  }
  return rows;
}
