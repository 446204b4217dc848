// What a consumption query answers, as data: which programs or frameworks it lists, and for each
// its periods and buckets with one value per requested metric. The server formats this as JSON and
// the truth module flattens it into rows, so both agree by construction; usage.int.test.ts checks the
// closed-form values themselves against hour-by-hour sums.

import { type V2Metric } from '../contract/api.js';
import { floorToGranularity, nextBucket, type Granularity, type Source } from '../domain/granularity.js';
import {
  activeRange,
  frameworkSeries,
  isGauge,
  programSeries,
  reportedValue,
  HOUR,
  type Metric,
  type Series,
} from './usage.js';
import type { Framework, Period, Program, World } from './world.js';

export interface BucketValues {
  /** Bucket bounds as the granularity defines them. */
  start: number;
  end: number;
  /** Bounds as reported: cut at a plan change for programs that split, else the bucket's. */
  timeframe_start: number;
  timeframe_end: number;
  /** One value per requested metric, in the order requested. */
  values: (number | bigint)[];
}

export interface PeriodValues {
  period: Period;
  buckets: BucketValues[];
}

export interface QueryWindow {
  granularity: Granularity;
  /** Already rounded down to the granularity. */
  from: number;
  to: number;
  now: number;
}

function ceilHour(ms: number): number {
  return Math.ceil(ms / HOUR) * HOUR;
}

/**
 * Periods and buckets of one program (program-level sources) or one of its frameworks. A bucket is
 * listed in a period when the entity had at least one active hour in it before `now`; its value in
 * that period covers only the hours inside the period, so the periods' values add up to the total.
 */
export function entityPeriods(
  world: World,
  source: Source,
  program: Program,
  framework: Framework | undefined,
  metrics: readonly Metric[],
  w: QueryWindow,
): PeriodValues[] {
  const [act0, act1] = framework
    ? activeRange(framework.created_at, framework.deleted_at)
    : activeRange(program.created_at, program.deleted_at);
  const dataStart = framework
    ? (world.orgById.get(program.org_id)?.framework_data_start ?? world.framework_data_start)
    : -Infinity;
  const lo = Math.max(w.from, act0, dataStart);
  const hi = Math.min(w.to, act1, ceilHour(w.now));
  if (lo >= hi) return [];

  const fws = world.frameworksByProgram.get(program.id) ?? [];
  const parts: Series[][] = metrics.map((m) =>
    framework ? [frameworkSeries(program, framework, m, dataStart)] : programSeries(program, fws, m),
  );
  const gauges = metrics.map((m) => source === 'v1_programs' && isGauge(m));
  const factors = metrics.map((m) => (source === 'v1_programs' ? undefined : program.big_factor?.[m as V2Metric]));

  const out: PeriodValues[] = [];
  const periods = program.periods;
  for (let i = 0; i < periods.length; i++) {
    const period = periods[i] as Period;
    const pStart = i === 0 ? -Infinity : period.start;
    const pEnd = period.end ?? Infinity;
    const a = Math.max(lo, pStart);
    const b = Math.min(hi, pEnd);
    if (a >= b) continue;
    const buckets: BucketValues[] = [];
    for (let bs = floorToGranularity(a, w.granularity); bs < b;) {
      const be = nextBucket(bs, w.granularity);
      const ha = Math.max(bs, a);
      const hb = Math.min(be, b);
      const values = metrics.map((_, j) =>
        reportedValue(parts[j] as Series[], ha, hb, w.now, gauges[j] as boolean, factors[j]),
      );
      const split = program.split_at_plan_change;
      buckets.push({
        start: bs,
        end: be,
        timeframe_start: split && i > 0 && period.start > bs ? period.start : bs,
        timeframe_end: split && period.end !== undefined && period.end < be ? period.end : be,
        values,
      });
      bs = be;
    }
    out.push({ period, buckets });
  }
  return out;
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a program appears in a consumption listing: created by `now`, and live or deleted after `from`. */
export function listedProgram(p: Program, from: number, now: number): boolean {
  return p.created_at <= now && (p.deleted_at === undefined || p.deleted_at > from);
}

/**
 * Programs a program-level query lists, in page order: v2 newest created first (then by id),
 * v1 by id. `programIds` narrows (and is assumed already checked for reach).
 */
export function listPrograms(
  world: World,
  source: 'v1_programs' | 'v2_programs',
  orgIds: ReadonlySet<string>,
  w: QueryWindow,
  programIds?: ReadonlySet<string>,
  onlyProgram?: string,
): Program[] {
  return sortedPrograms(world, source).filter(
    (p) =>
      orgIds.has(p.org_id) &&
      listedProgram(p, w.from, w.now) &&
      (!programIds || programIds.has(p.id)) &&
      (!onlyProgram || p.id === onlyProgram),
  );
}

// Page order per source (v2 newest first, v1 and GET /programs by id), sorted once per world: the large scenario pages through 10,000 programs.
const SORTED = new WeakMap<World, Map<string, Program[]>>();
export function sortedPrograms(world: World, source: 'v1_programs' | 'v2_programs'): Program[] {
  let bySource = SORTED.get(world);
  if (!bySource) SORTED.set(world, (bySource = new Map()));
  let list = bySource.get(source);
  if (!list) {
    list = [...world.programs];
    if (source === 'v2_programs') list.sort((a, b) => b.created_at - a.created_at || byId(a, b));
    else list.sort(byId);
    bySource.set(source, list);
  }
  return list;
}

/** Frameworks the frameworks endpoint lists for these programs: live ones and deleted ones that had usage since `from`. */
export function listFrameworks(
  world: World,
  programIds: readonly string[],
  w: QueryWindow,
  branchIds?: ReadonlySet<string>,
): { program: Program; framework: Framework }[] {
  const programs = programIds
    .map((id) => world.programById.get(id))
    .filter((p): p is Program => p !== undefined)
    .sort(byId);
  const out: { program: Program; framework: Framework }[] = [];
  for (const program of programs) {
    const dataStart = world.orgById.get(program.org_id)?.framework_data_start ?? world.framework_data_start;
    for (const f of world.frameworksByProgram.get(program.id) ?? []) {
      if (branchIds && !branchIds.has(f.id)) continue;
      if (f.created_at > w.now) continue;
      if (f.deleted_at !== undefined && f.deleted_at <= Math.max(w.from, dataStart)) continue;
      out.push({ program, framework: f });
    }
  }
  return out;
}
