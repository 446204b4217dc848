// Turns consumption items into long rows (one per metric value), exactly as the API reported them.
// v2 buckets carry a sparse, unordered metrics[] array; v1 buckets carry one integer field per metric.
import { ResponseFormatError } from '../api/errors.js';
import type { UsageRowIn } from '../store/store.js';

export interface NormaliseContext {
  orgId: string | null;
  requestId: string;
  describe: string;
}

type Obj = Record<string, unknown>;

function fail(ctx: NormaliseContext, what: string): never {
  throw new ResponseFormatError(`${ctx.describe}: ${what}`, ctx.requestId, ctx.describe);
}

function str(o: Obj, key: string, ctx: NormaliseContext, where: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v.length === 0) fail(ctx, `${where}.${key} should be a non-empty string, got ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)}`);
  return v;
}

const dateCache = new Map<string, Date>();
/** Buckets repeat the same few timestamps thousands of times per page: share one Date per string. */
function time(o: Obj, key: string, ctx: NormaliseContext, where: string): Date {
  const s = str(o, key, ctx, where);
  let d = dateCache.get(s);
  if (d === undefined) {
    const ms = Date.parse(s);
    if (Number.isNaN(ms)) fail(ctx, `${where}.${key} is not a date-time: "${s}"`);
    d = new Date(ms);
    if (dateCache.size > 50_000) dateCache.clear();
    dateCache.set(s, d);
  }
  return d;
}

function optionalTime(o: Obj, key: string, ctx: NormaliseContext, where: string): Date | null {
  const v = o[key];
  return v === undefined || v === null ? null : time(o, key, ctx, where);
}

function int64(v: unknown, ctx: NormaliseContext, where: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  fail(ctx, `${where} should be an integer, got ${JSON.stringify(v)}`);
}

function array(o: Obj, key: string, ctx: NormaliseContext, where: string): Obj[] {
  const v = o[key];
  if (!Array.isArray(v)) fail(ctx, `${where}.${key} should be an array`);
  return v as Obj[];
}

interface Owner {
  program_id: string;
  framework_id?: string;
}

function* periodRows(
  item: Obj,
  owner: Owner,
  ctx: NormaliseContext,
  where: string,
  bucketValues: (bucket: Obj, where: string) => Iterable<[string, bigint]>,
): Generator<UsageRowIn> {
  const periods = array(item, 'periods', ctx, where);
  for (let p = 0; p < periods.length; p++) {
    const period = periods[p]!;
    const pw = `${where}.periods[${p}]`;
    const period_id = str(period, 'period_id', ctx, pw);
    const period_plan = str(period, 'period_plan', ctx, pw);
    const period_start = time(period, 'period_start', ctx, pw);
    const period_end = optionalTime(period, 'period_end', ctx, pw);
    const buckets = array(period, 'consumption', ctx, pw);
    for (let b = 0; b < buckets.length; b++) {
      const bucket = buckets[b]!;
      const bw = `${pw}.consumption[${b}]`;
      const timeframe_start = time(bucket, 'timeframe_start', ctx, bw);
      const timeframe_end = time(bucket, 'timeframe_end', ctx, bw);
      for (const [metric, value] of bucketValues(bucket, bw)) {
        // Absent means zero and the API sometimes sends an explicit 0 instead: store neither, so the
        // same usage always gives the same rows.
        if (value === 0n) continue;
        yield {
          org_id: ctx.orgId,
          program_id: owner.program_id,
          ...(owner.framework_id !== undefined ? { framework_id: owner.framework_id } : {}),
          period_id,
          period_plan,
          period_start,
          period_end,
          timeframe_start,
          timeframe_end,
          metric,
          value,
        };
      }
    }
  }
}

function v2Values(ctx: NormaliseContext) {
  return function* (bucket: Obj, where: string): Generator<[string, bigint]> {
    const metrics = bucket.metrics;
    // Absent means zero: a bucket with no usage may omit the array entirely.
    if (metrics === undefined || metrics === null) return;
    if (!Array.isArray(metrics)) fail(ctx, `${where}.metrics should be an array`);
    for (let i = 0; i < metrics.length; i++) {
      const m = metrics[i] as Obj;
      const name = str(m, 'metric_name', ctx, `${where}.metrics[${i}]`);
      yield [name, int64(m.value, ctx, `${where}.metrics[${i}].value`)];
    }
  };
}

function v1Values(ctx: NormaliseContext, metrics: readonly string[]) {
  return function* (bucket: Obj, where: string): Generator<[string, bigint]> {
    for (const name of metrics) {
      const v = bucket[name];
      if (v === undefined || v === null) continue; // absent means zero
      yield [name, int64(v, ctx, `${where}.${name}`)];
    }
  };
}

/** Rows of one v2 program item: {program_id, periods[]}. */
export function v2ProgramRows(item: Obj, ctx: NormaliseContext, where: string): Generator<UsageRowIn> {
  return periodRows(item, { program_id: str(item, 'program_id', ctx, where) }, ctx, where, v2Values(ctx));
}

/** Rows of one v2 framework item: {program_id, framework_id, periods[]}. */
export function v2FrameworkRows(item: Obj, ctx: NormaliseContext, where: string): Generator<UsageRowIn> {
  const owner = { program_id: str(item, 'program_id', ctx, where), framework_id: str(item, 'framework_id', ctx, where) };
  return periodRows(item, owner, ctx, where, v2Values(ctx));
}

/** Rows of one v1 program item, for the metrics that were asked for. */
export function v1ProgramRows(item: Obj, metrics: readonly string[], ctx: NormaliseContext, where: string): Generator<UsageRowIn> {
  return periodRows(item, { program_id: str(item, 'program_id', ctx, where) }, ctx, where, v1Values(ctx, metrics));
}
