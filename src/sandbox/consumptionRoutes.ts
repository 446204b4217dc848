// The consumption endpoints (GET /consumption_history/programs, /v2/programs, /v2/frameworks): their
// checks, in the order the API applies them, and their pages written as JSON bytes.

import {
  MAX_BRANCH_IDS,
  MAX_PROGRAM_IDS,
  PAGE_SIZE,
  V1_DEFAULT_METRICS,
  V1_METRICS,
  V2_FRAMEWORK_METRICS,
  V2_PROGRAM_METRICS,
} from '../contract/api.js';
import { nextBucket, type Source } from '../domain/granularity.js';
import { reachesProgram } from './auth.js';
import {
  entityPeriods,
  listFrameworks,
  listPrograms,
  type BucketValues,
  type PeriodValues,
  type QueryWindow,
} from './consumption.js';
import { hash3 } from './hash.js';
import { ByteWriter, isoCache, type BufferPool, type RawJson } from './json.js';
import { boolParam, checkLookBack, intParam, listParam, metricsParam, paginate, windowParams } from './params.js';
import { bad, notEligible, notFound, type Route, type RouteContext } from './route.js';
import { HOUR, type Metric } from './usage.js';
import type { Program, World } from './world.js';

// ---- consumption bodies -----------------------------------------------------------------------

/**
 * Writes the `periods` array of one program or framework. v1 buckets carry one integer field per
 * metric; v2 buckets a sparse `metrics` array (a zero usually left out, sometimes explicit) in an
 * order that varies from bucket to bucket.
 */
function writePeriods(
  out: ByteWriter,
  source: Source,
  periods: PeriodValues[],
  metrics: readonly Metric[],
  entityKey: number,
  now: number,
  iso: (ms: number) => string,
): void {
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
function pageText<T>(
  pool: BufferPool,
  listKey: string,
  page: readonly T[],
  cursor: string | undefined,
  w: QueryWindow,
  metricCount: number,
  item: (out: ByteWriter, t: T) => void,
): RawJson {
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
  const metrics =
    metricsParam(q, V1_METRICS, V1_METRICS) ??
    (includeV1 ? [...V1_DEFAULT_METRICS, 'data_storage_bytes_hour' as const] : [...V1_DEFAULT_METRICS]);
  const w = windowParams(ctx);
  const orgId = q.get('org_id') || undefined;
  let orgIds: Set<string>;
  if (orgId !== undefined) {
    const org = world.orgById.get(orgId);
    if (!org || !key.orgIds.has(orgId)) throw notFound(`organization '${orgId}' not found`);
    if (org.billing !== 'legacy')
      throw notEligible('this endpoint serves legacy plans; use /consumption_history/v2/programs');
    orgIds = new Set([orgId]);
  } else {
    orgIds = new Set([...key.orgIds].filter((id) => world.orgById.get(id)?.billing === 'legacy'));
  }
  const picked = programIds && programIds.length > 0 ? requireReachable(ctx, programIds) : undefined;
  for (const p of picked ?? []) {
    if (orgId !== undefined && p.org_id !== orgId)
      throw notFound(`program '${p.id}' not found in organization '${orgId}'`);
    if (billingOf(world, p) !== 'legacy') throw notEligible(`program '${p.id}' is not on a legacy plan`);
  }
  if (orgIds.size === 0) throw notEligible('no organization on a legacy plan is reachable with this key');
  checkLookBack(w);
  const list = listPrograms(world, 'v1_programs', orgIds, w, picked && new Set(picked.map((p) => p.id)), key.programId);
  return programsPage(ctx, 'v1_programs', list, w, metrics, limit);
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
  if (org.billing !== 'current')
    throw notEligible('this endpoint serves current plans; use /consumption_history/programs');
  const picked = programIds && programIds.length > 0 ? requireReachable(ctx, programIds) : undefined;
  for (const p of picked ?? [])
    if (p.org_id !== orgId) throw notFound(`program '${p.id}' not found in organization '${orgId}'`);
  checkLookBack(w);
  const list = listPrograms(
    world,
    'v2_programs',
    new Set([orgId]),
    w,
    picked && new Set(picked.map((p) => p.id)),
    key.programId,
  );
  return programsPage(ctx, 'v2_programs', list, w, metrics, limit);
}

/** One page of a programs listing (v1 or v2): the same shape, the periods of the source's plans. */
function programsPage(
  ctx: RouteContext,
  source: 'v1_programs' | 'v2_programs',
  list: readonly Program[],
  w: QueryWindow,
  metrics: readonly Metric[],
  limit: number,
): unknown {
  const { page, cursor } = paginate(ctx, list, (p) => p.id, limit);
  const iso = isoCache();
  return pageText(ctx.pool, 'programs', page, cursor, w, metrics.length, (out, p) => {
    out.text('{"program_id":');
    out.quoted(p.id);
    out.text(',"periods":');
    writePeriods(out, source, entityPeriods(ctx.world, source, p, undefined, metrics, w), metrics, p.key, ctx.now, iso);
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
  for (const p of programs)
    if (billingOf(world, p) !== 'current') throw notEligible(`program '${p.id}' is on a legacy plan`);
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
    writePeriods(
      out,
      'v2_frameworks',
      entityPeriods(world, 'v2_frameworks', program, framework, metrics, w),
      metrics,
      framework.key,
      ctx.now,
      iso,
    );
    out.text('}');
  });
}

export const CONSUMPTION_ROUTES: readonly Route[] = [
  { template: '/consumption_history/programs', pattern: /^\/consumption_history\/programs$/, handle: v1Programs },
  {
    template: '/consumption_history/v2/programs',
    pattern: /^\/consumption_history\/v2\/programs$/,
    handle: v2Programs,
  },
  {
    template: '/consumption_history/v2/frameworks',
    pattern: /^\/consumption_history\/v2\/frameworks$/,
    handle: v2Frameworks,
  },
];
