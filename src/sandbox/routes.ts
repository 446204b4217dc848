// The /v1 endpoints the sandbox serves (spec §4.1-4.3), each a function from an authenticated
// request to a JSON body, throwing ApiError for the statuses the spec names.

import { earliestAllowedFrom, MAX_BRANCH_IDS, MAX_PROGRAM_IDS, PAGE_SIZE, V1_DEFAULT_METRICS, V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { floorToGranularity, GRANULARITIES, nextBucket, type Granularity, type Source } from '../domain/granularity.js';
import { reachesProgram, type KeyReach } from './auth.js';
import { entityPeriods, listFrameworks, listPrograms, sortedPrograms, type BucketValues, type PeriodValues, type QueryWindow } from './consumption.js';
import { hash3, hashString } from './hash.js';
import { ByteWriter, isoCache, isoSeconds, type BufferPool, type RawJson } from './json.js';
import { HOUR, type Metric } from './usage.js';
import type { Framework, Program, World } from './world.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface RouteContext {
  world: World;
  key: KeyReach;
  now: number;
  query: URLSearchParams;
  /** Path parameters captured by the route's pattern. */
  params: string[];
  /** Route template, part of what decides the shape of a query's last page. */
  template: string;
  /** Buffers for consumption pages, reused across responses. */
  pool: BufferPool;
}

export interface Route {
  template: string;
  pattern: RegExp;
  handle(ctx: RouteContext): unknown;
}

/** GET /programs page size (the list endpoint's own bound, not a usage limit). */
export const PROGRAMS_LIST_PAGE = { min: 1, max: 400, default: 10 } as const;
/** Date-times as the API accepts them: RFC 3339, seconds and fraction optional. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

const bad = (message: string): ApiError => new ApiError(400, 'bad_request', message);
const notFound = (message: string): ApiError => new ApiError(404, 'not_found', message);
const notEligible = (message: string): ApiError => new ApiError(403, 'forbidden', message);

// ---- parameters -------------------------------------------------------------------------------

/** A list parameter, repeated or comma-separated (or both); undefined when absent. */
function listParam(q: URLSearchParams, name: string): string[] | undefined {
  const raw = q.getAll(name);
  if (raw.length === 0) return undefined;
  return [...new Set(raw.flatMap((v) => v.split(',')).map((s) => s.trim()).filter((s) => s !== ''))];
}

function intParam(q: URLSearchParams, name: string, range: { min: number; max: number; default: number }): number {
  const v = q.get(name);
  if (v === null) return range.default;
  const n = /^\d{1,9}$/.test(v) ? Number(v) : NaN;
  if (!(n >= range.min && n <= range.max)) throw bad(`${name} must be an integer from ${range.min} to ${range.max}`);
  return n;
}

function boolParam(q: URLSearchParams, name: string): boolean {
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

function metricsParam(q: URLSearchParams, allowed: readonly string[], all: readonly string[]): Metric[] | undefined {
  const list = listParam(q, 'metrics');
  if (list === undefined) return undefined;
  if (list.length === 0) throw bad('metrics must name at least one metric');
  for (const m of list) {
    if (!allowed.includes(m)) throw bad(all.includes(m) ? `metric '${m}' is not supported by this endpoint` : `unknown metric '${m}'`);
  }
  return list as Metric[];
}

function windowParams(ctx: RouteContext): QueryWindow {
  const g = ctx.query.get('granularity');
  if (g === null || g === '') throw bad('granularity is required (hourly, daily or monthly)');
  if (!(GRANULARITIES as readonly string[]).includes(g)) throw bad(`granularity must be hourly, daily or monthly, got '${g}'`);
  const granularity = g as Granularity;
  const from = floorToGranularity(dateParam(ctx.query, 'from'), granularity);
  const to = floorToGranularity(dateParam(ctx.query, 'to'), granularity);
  if (from >= to) throw bad('from must be before to once both are rounded down to the granularity');
  return { granularity, from, to, now: ctx.now };
}

/** 406 when `from` reaches further back than the granularity's window at the current clock. */
function checkLookBack(w: QueryWindow): void {
  const earliest = earliestAllowedFrom(w.now, w.granularity);
  if (w.from < earliest) {
    throw new ApiError(406, 'range_out_of_bounds', `from must not be earlier than ${isoSeconds(earliest)} for ${w.granularity} granularity`);
  }
}

// ---- paging -----------------------------------------------------------------------------------

/**
 * One page after `cursor` (the id of the previous page's last item). A non-last page carries a
 * cursor; the last page, depending on the query, carries none or one that yields an empty page.
 */
function paginate<T>(ctx: RouteContext, items: readonly T[], idOf: (t: T) => string, limit: number): { page: T[]; cursor?: string } {
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
  const parts = names.map((k) => `${k}=${ctx.query.getAll(k).flatMap((v) => v.split(',')).join(',')}`);
  return (hashString(`${ctx.world.seed}|${ctx.template}|${ctx.params.join('/')}|${parts.join('&')}`) & 1) === 1;
}

function withCursor(body: Record<string, unknown>, cursor: string | undefined): Record<string, unknown> {
  return cursor === undefined ? body : { ...body, pagination: { cursor } };
}

// ---- consumption bodies -----------------------------------------------------------------------

/**
 * Writes the `periods` array of one program or framework. v1 buckets carry one integer field per
 * metric; v2 buckets a sparse `metrics` array (a zero usually left out, sometimes explicit) in an
 * order that varies from bucket to bucket.
 */
function writePeriods(out: ByteWriter, source: Source, periods: PeriodValues[], metrics: readonly Metric[], entityKey: number, now: number, iso: (ms: number) => string): void {
  const order: number[] = [];
  const v1Keys = source === 'v1_programs' ? metrics.map((m) => `,"${m}":`) : [];
  out.text('[');
  for (let pi = 0; pi < periods.length; pi++) {
    const { period, buckets } = periods[pi] as PeriodValues;
    out.text(pi > 0 ? ',{"period_id":' : '{"period_id":');
    out.quoted(period.period_id);
    out.text(',"period_plan":"');
    out.text(period.plan);
    out.text('","period_start":"');
    out.text(iso(period.start));
    if (period.end !== undefined && period.end <= now) {
      out.text('","period_end":"');
      out.text(iso(period.end));
    }
    out.text('","consumption":[');
    for (let bi = 0; bi < buckets.length; bi++) {
      const b = buckets[bi] as BucketValues;
      out.text(bi > 0 ? ',{"timeframe_start":"' : '{"timeframe_start":"');
      out.text(iso(b.timeframe_start));
      out.text('","timeframe_end":"');
      out.text(iso(b.timeframe_end));
      out.text('"');
      const values = b.values;
      if (source === 'v1_programs') {
        for (let i = 0; i < values.length; i++) {
          out.text(v1Keys[i] as string);
          out.int(values[i] as number | bigint);
        }
        out.text('}');
        continue;
      }
      const h = hash3(entityKey, Math.floor(b.start / HOUR), pi);
      order.length = 0;
      for (let i = 0; i < values.length; i++) {
        const v = values[i] as number | bigint;
        if ((v !== 0 && v !== 0n) || (h >>> (i * 3)) % 8 === 0) order.push(i);
      }
      // A rotation, reversed or not: cheap, deterministic, and rarely the requested order.
      const n = order.length;
      const rot = n > 0 ? (h >>> 24) % n : 0;
      const rev = (h & 0x800000) !== 0;
      out.text(',"metrics":[');
      for (let k = 0; k < n; k++) {
        const i = order[(rev ? n - 1 - k + rot : k + rot) % n] as number;
        out.text(k > 0 ? ',{"metric_name":"' : '{"metric_name":"');
        out.text(metrics[i] as string);
        out.text('","value":');
        out.int(values[i] as number | bigint);
        out.text('}');
      }
      out.text(']}');
    }
    out.text(']}');
  }
  out.text(']');
}

/** A consumption page: `{"<listKey>":[items...], "pagination":{"cursor":...}}`, each item written by `item`. */
function pageText<T>(pool: BufferPool, listKey: string, page: readonly T[], cursor: string | undefined, w: QueryWindow, metricCount: number, item: (out: ByteWriter, t: T) => void): RawJson {
  // Sized for the page up front: growing by doubling allocated three times the page in buffers,
  // and that external memory set off a full garbage collection every other large page.
  let buckets = 0;
  for (let t = w.from; t < w.to && t < w.now; t = nextBucket(t, w.granularity)) buckets++;
  const out = new ByteWriter(256 + page.length * (200 + buckets * (90 + metricCount * 64)), pool);
  out.text(`{"${listKey}":[`);
  page.forEach((t, i) => {
    if (i > 0) out.text(',');
    item(out, t);
  });
  out.text(']');
  if (cursor !== undefined) {
    out.text(',"pagination":{"cursor":');
    out.quoted(cursor);
    out.text('}');
  }
  out.text('}');
  return out.finish();
}

function requireReachable(ctx: RouteContext, ids: readonly string[]): Program[] {
  return ids.map((id) => {
    const p = ctx.world.programById.get(id);
    if (!p || !reachesProgram(ctx.key, p) || p.created_at > ctx.now) throw notFound(`program '${id}' not found`);
    return p;
  });
}

function billingOf(world: World, p: Program): string {
  return world.orgById.get(p.org_id)?.billing ?? '';
}

function v1Programs(ctx: RouteContext): unknown {
  const { query: q, world, key } = ctx;
  const limit = intParam(q, 'limit', PAGE_SIZE.v1_programs);
  const programIds = listParam(q, 'program_ids');
  if (programIds && programIds.length > MAX_PROGRAM_IDS) throw bad(`program_ids takes at most ${MAX_PROGRAM_IDS} ids`);
  const includeV1 = boolParam(q, 'include_v1_metrics');
  const metrics = metricsParam(q, V1_METRICS, V1_METRICS) ?? (includeV1 ? [...V1_DEFAULT_METRICS, 'data_storage_bytes_hour' as const] : [...V1_DEFAULT_METRICS]);
  const w = windowParams(ctx);
  const orgId = q.get('org_id') || undefined;
  let orgIds: Set<string>;
  if (orgId !== undefined) {
    const org = world.orgById.get(orgId);
    if (!org || !key.orgIds.has(orgId)) throw notFound(`organization '${orgId}' not found`);
    if (org.billing !== 'legacy') throw notEligible('this endpoint serves legacy plans; use /consumption_history/v2/programs');
    orgIds = new Set([orgId]);
  } else {
    orgIds = new Set([...key.orgIds].filter((id) => world.orgById.get(id)?.billing === 'legacy'));
  }
  const picked = programIds && programIds.length > 0 ? requireReachable(ctx, programIds) : undefined;
  for (const p of picked ?? []) {
    if (orgId !== undefined && p.org_id !== orgId) throw notFound(`program '${p.id}' not found in organization '${orgId}'`);
    if (billingOf(world, p) !== 'legacy') throw notEligible(`program '${p.id}' is not on a legacy plan`);
  }
  if (orgIds.size === 0) throw notEligible('no organization on a legacy plan is reachable with this key');
  checkLookBack(w);
  const list = listPrograms(world, 'v1_programs', orgIds, w, picked && new Set(picked.map((p) => p.id)), key.programId);
  const { page, cursor } = paginate(ctx, list, (p) => p.id, limit);
  const iso = isoCache();
  return pageText(ctx.pool, 'programs', page, cursor, w, metrics.length, (out, p) => {
    out.text('{"program_id":');
    out.quoted(p.id);
    out.text(',"periods":');
    writePeriods(out, 'v1_programs', entityPeriods(world, 'v1_programs', p, undefined, metrics, w), metrics, p.key, ctx.now, iso);
    out.text('}');
  });
}

function v2Programs(ctx: RouteContext): unknown {
  const { query: q, world, key } = ctx;
  const limit = intParam(q, 'limit', PAGE_SIZE.v2_programs);
  const programIds = listParam(q, 'program_ids');
  if (programIds && programIds.length > MAX_PROGRAM_IDS) throw bad(`program_ids takes at most ${MAX_PROGRAM_IDS} ids`);
  const orgId = q.get('org_id');
  if (!orgId) throw bad('org_id is required');
  const metrics = metricsParam(q, V2_PROGRAM_METRICS, V2_PROGRAM_METRICS);
  if (!metrics) throw bad('metrics is required');
  const w = windowParams(ctx);
  const org = world.orgById.get(orgId);
  if (!org || !key.orgIds.has(orgId)) throw notFound(`organization '${orgId}' not found`);
  if (org.billing !== 'current') throw notEligible('this endpoint serves current plans; use /consumption_history/programs');
  const picked = programIds && programIds.length > 0 ? requireReachable(ctx, programIds) : undefined;
  for (const p of picked ?? []) if (p.org_id !== orgId) throw notFound(`program '${p.id}' not found in organization '${orgId}'`);
  checkLookBack(w);
  const list = listPrograms(world, 'v2_programs', new Set([orgId]), w, picked && new Set(picked.map((p) => p.id)), key.programId);
  const { page, cursor } = paginate(ctx, list, (p) => p.id, limit);
  const iso = isoCache();
  return pageText(ctx.pool, 'programs', page, cursor, w, metrics.length, (out, p) => {
    out.text('{"program_id":');
    out.quoted(p.id);
    out.text(',"periods":');
    writePeriods(out, 'v2_programs', entityPeriods(world, 'v2_programs', p, undefined, metrics, w), metrics, p.key, ctx.now, iso);
    out.text('}');
  });
}

function v2Frameworks(ctx: RouteContext): unknown {
  const { query: q, world } = ctx;
  const limit = intParam(q, 'limit', PAGE_SIZE.v2_frameworks);
  const programIds = listParam(q, 'program_ids');
  if (!programIds || programIds.length === 0) throw bad('program_ids is required (1 to 100 ids)');
  if (programIds.length > MAX_PROGRAM_IDS) throw bad(`program_ids takes at most ${MAX_PROGRAM_IDS} ids`);
  const branchIds = listParam(q, 'branch_ids');
  if (branchIds && branchIds.length > MAX_BRANCH_IDS) throw bad(`branch_ids takes at most ${MAX_BRANCH_IDS} ids`);
  const metrics = metricsParam(q, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS);
  if (!metrics) throw bad('metrics is required');
  const w = windowParams(ctx);
  const programs = requireReachable(ctx, programIds);
  for (const p of programs) if (billingOf(world, p) !== 'current') throw notEligible(`program '${p.id}' is on a legacy plan`);
  checkLookBack(w);
  const list = listFrameworks(world, programIds, w, branchIds && branchIds.length > 0 ? new Set(branchIds) : undefined);
  const { page, cursor } = paginate(ctx, list, (x) => x.framework.id, limit);
  const iso = isoCache();
  return pageText(ctx.pool, 'frameworks', page, cursor, w, metrics.length, (out, { program, framework }) => {
    out.text('{"program_id":');
    out.quoted(program.id);
    out.text(',"framework_id":');
    out.quoted(framework.id);
    out.text(',"periods":');
    writePeriods(out, 'v2_frameworks', entityPeriods(world, 'v2_frameworks', program, framework, metrics, w), metrics, framework.key, ctx.now, iso);
    out.text('}');
  });
}

// ---- listing endpoints ------------------------------------------------------------------------

function live(t: { created_at: number; deleted_at?: number }, now: number): boolean {
  return t.created_at <= now && (t.deleted_at === undefined || t.deleted_at > now);
}

/** A program's updated_at moves when one of its frameworks or snapshots appears or goes away. */
function programUpdatedAt(world: RouteContext['world'], p: Program, now: number): number {
  let at = p.created_at;
  for (const f of world.frameworksByProgram.get(p.id) ?? []) {
    if (f.created_at <= now) at = Math.max(at, f.created_at);
    if (f.deleted_at !== undefined && f.deleted_at <= now) at = Math.max(at, f.deleted_at);
  }
  for (const s of world.snapshotsByProgram.get(p.id) ?? []) {
    if (s.created_at <= now) at = Math.max(at, s.created_at);
    if (s.expires_at !== undefined && s.expires_at <= now) at = Math.max(at, s.expires_at);
  }
  return at;
}

function programItem(p: Program, ctx: RouteContext): Record<string, unknown> {
  return {
    id: p.id, org_id: p.org_id, name: p.name, region_id: p.region_id, created_at: isoSeconds(p.created_at),
    updated_at: isoSeconds(programUpdatedAt(ctx.world, p, ctx.now)),
  };
}

function frameworkItem(f: Framework, now: number): Record<string, unknown> {
  const passing = Math.min(f.controls_total, Math.floor((f.controls_total * (60 + ((f.key >>> 3) % 40))) / 100));
  return {
    id: f.id, program_id: f.program_id, name: f.name, display_name: f.display_name,
    controls_passing: passing, controls_total: f.controls_total, current_state: 'ready',
    default: f.default, protected: false, created_at: isoSeconds(f.created_at), updated_at: isoSeconds(Math.max(f.created_at, now - 86_400_000)),
  };
}

function liveProgram(ctx: RouteContext): Program {
  const id = ctx.params[0] as string;
  const p = ctx.world.programById.get(id);
  if (!p || !reachesProgram(ctx.key, p) || !live(p, ctx.now)) throw notFound(`program '${id}' not found`);
  return p;
}

function listProgramsRoute(ctx: RouteContext): unknown {
  const limit = intParam(ctx.query, 'limit', PROGRAMS_LIST_PAGE);
  const orgId = ctx.query.get('org_id') || undefined;
  if (orgId !== undefined && !ctx.key.orgIds.has(orgId)) throw notFound(`organization '${orgId}' not found`);
  const list = sortedPrograms(ctx.world, 'v1_programs').filter((p) => reachesProgram(ctx.key, p) && live(p, ctx.now) && (orgId === undefined || p.org_id === orgId));
  const { page, cursor } = paginate(ctx, list, (p) => p.id, limit);
  return withCursor({ programs: page.map((p) => programItem(p, ctx)) }, cursor);
}

function authRoute(ctx: RouteContext): unknown {
  return {
    auth_method: 'api_key',
    key_type: ctx.key.type,
    org_ids: [...ctx.key.orgIds],
    ...(ctx.key.programId !== undefined ? { program_id: ctx.key.programId } : {}),
  };
}

export const ROUTES: readonly Route[] = [
  { template: '/programs', pattern: /^\/programs$/, handle: listProgramsRoute },
  { template: '/programs/{id}', pattern: /^\/programs\/([^/]+)$/, handle: (ctx) => ({ program: programItem(liveProgram(ctx), ctx) }) },
  {
    template: '/programs/{id}/frameworks',
    pattern: /^\/programs\/([^/]+)\/frameworks$/,
    handle: (ctx) => {
      const p = liveProgram(ctx);
      return { frameworks: (ctx.world.frameworksByProgram.get(p.id) ?? []).filter((f) => live(f, ctx.now)).map((f) => frameworkItem(f, ctx.now)) };
    },
  },
  {
    template: '/programs/{id}/snapshots',
    pattern: /^\/programs\/([^/]+)\/snapshots$/,
    handle: (ctx) => {
      const p = liveProgram(ctx);
      const snaps = (ctx.world.snapshotsByProgram.get(p.id) ?? []).filter((s) => s.created_at <= ctx.now && (s.expires_at === undefined || s.expires_at > ctx.now));
      return {
        snapshots: snaps.map((s) => ({
          id: s.id, name: s.name, source_branch_id: s.source_branch_id, created_at: isoSeconds(s.created_at), manual: s.manual,
          ...(s.expires_at !== undefined ? { expires_at: isoSeconds(s.expires_at) } : {}),
        })),
      };
    },
  },
  { template: '/auth', pattern: /^\/auth$/, handle: authRoute },
  {
    template: '/users/me/organizations',
    pattern: /^\/users\/me\/organizations$/,
    handle: (ctx) => ({ organizations: ctx.world.orgs.filter((o) => ctx.key.orgIds.has(o.id)).map((o) => ({ id: o.id, name: o.name })) }),
  },
  { template: '/consumption_history/programs', pattern: /^\/consumption_history\/programs$/, handle: v1Programs },
  { template: '/consumption_history/v2/programs', pattern: /^\/consumption_history\/v2\/programs$/, handle: v2Programs },
  { template: '/consumption_history/v2/frameworks', pattern: /^\/consumption_history\/v2\/frameworks$/, handle: v2Frameworks },
];

export function matchRoute(path: string): { route: Route; params: string[] } | undefined {
  for (const route of ROUTES) {
    const m = route.pattern.exec(path);
    if (m) return { route, params: m.slice(1).map((s) => decodeURIComponent(s)) };
  }
  return undefined;
}
