// Closed-form usage values. Every series has integer hourly values
//   value(hour) = base * WEEKDAY[day of week] * noise(day) * SHAPE[hour of day]
// so a day's sum over any run of hours is dayAmount * (prefix-sum difference of the shape), a month
// is at most 31 such terms, and a coarser bucket is always the exact sum (or, for gauges, the max) of
// its hourly values. Only the few hours that are still settling near `now` are computed one by one.

import { V1_GAUGE_METRICS, V1_METRICS, V2_PROGRAM_METRICS, type V1Metric, type V2Metric } from '../contract/api.js';
import { hash3 } from './hash.js';
import type { Framework, Program, ProgramEvents } from './model.js';

export const HOUR = 3_600_000;
export const DAY = 86_400_000;
/** Data is refreshed every 15 minutes; an hour is final 12 refreshes (3 hours) after it closes. */
export const SETTLE_STEP_MS = 15 * 60_000;
export const SETTLE_STEPS = 12;

const SHAPES: readonly (readonly number[])[] = [
  [2, 1, 1, 1, 1, 1, 2, 3, 5, 7, 8, 9, 9, 8, 8, 9, 8, 7, 6, 5, 4, 3, 3, 2], // office hours
  [5, 5, 4, 4, 4, 5, 6, 7, 8, 9, 9, 9, 8, 8, 8, 8, 9, 9, 8, 7, 7, 6, 6, 5], // flat
  [8, 9, 9, 9, 8, 7, 5, 4, 3, 3, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 8, 8], // overnight batches
  [3, 3, 3, 3, 3, 3, 4, 5, 6, 7, 8, 9, 9, 9, 8, 7, 6, 5, 5, 4, 4, 4, 3, 3], // midday peak
];
/** Sunday first (day 0 of the epoch was a Thursday). */
const WEEKDAY = [3, 5, 5, 5, 5, 5, 3];
const MAX_WEEKDAY = 5;
const MAX_NOISE = 7;
const MAX_SHAPE = 9;
/** Prefix sums of each shape: PREFIX[s][j] = sum of SHAPE[s][0..j). */
const PREFIX = SHAPES.map((s) => s.reduce<number[]>((acc, v) => (acc.push((acc[acc.length - 1] ?? 0) + v), acc), [0]));

/** One integer hourly series over its active hours [from, to). */
export interface Series {
  key: number;
  metric: number;
  base: number;
  from: number;
  to: number;
  shape: number;
  /** No day-to-day noise (scenario 'bigint', so peaks reach the bound). */
  flat: boolean;
  /** Some days have no usage at all. */
  zeroDays: boolean;
  /** The program's labelled events (spikes, start, drift), shared by all its series. */
  events?: ProgramEvents;
}

interface Scale {
  lo: number;
  hi: number;
  zeroPct: number;
  zeroDays: boolean;
}
const V2_SCALE: Record<V2Metric, Scale> = {
  compute_unit_seconds: { lo: 1, hi: 40, zeroPct: 0, zeroDays: false },
  root_branch_bytes_month: { lo: 20_000, hi: 600_000, zeroPct: 0, zeroDays: false },
  child_branch_bytes_month: { lo: 1_000, hi: 200_000, zeroPct: 30, zeroDays: false },
  instant_restore_bytes_month: { lo: 1_000, hi: 100_000, zeroPct: 40, zeroDays: true },
  public_network_transfer_bytes: { lo: 10_000, hi: 2_000_000, zeroPct: 10, zeroDays: false },
  private_network_transfer_bytes: { lo: 1_000, hi: 1_000_000, zeroPct: 60, zeroDays: true },
  extra_branches_month: { lo: 1, hi: 3, zeroPct: 50, zeroDays: false },
  snapshot_storage_bytes_month: { lo: 10_000, hi: 500_000, zeroPct: 30, zeroDays: false },
};
const V1_SCALE: Record<V1Metric, Scale> = {
  active_time_seconds: { lo: 1, hi: 11, zeroPct: 0, zeroDays: false },
  compute_time_seconds: { lo: 1, hi: 8, zeroPct: 0, zeroDays: false },
  written_data_bytes: { lo: 10_000, hi: 5_000_000, zeroPct: 0, zeroDays: true },
  synthetic_storage_size_bytes: { lo: 1_000_000, hi: 30_000_000, zeroPct: 0, zeroDays: false },
  data_storage_bytes_hour: { lo: 1_000_000, hi: 30_000_000, zeroPct: 0, zeroDays: false },
  logical_size_bytes: { lo: 1_000_000, hi: 20_000_000, zeroPct: 0, zeroDays: false },
  logical_size_bytes_hour: { lo: 1_000_000, hi: 20_000_000, zeroPct: 0, zeroDays: false },
};

/** The v2 metrics measured in byte-months (the ones that pass 2^53 in scenario 'bigint'). */
export const BYTE_MONTH_METRICS: readonly V2Metric[] = [
  'root_branch_bytes_month',
  'child_branch_bytes_month',
  'instant_restore_bytes_month',
  'snapshot_storage_bytes_month',
];
/** The v2 metrics that frameworks carry; a program's value of these is its frameworks' sum plus a remainder. */
const FRAMEWORK_METRIC_SET = new Set<string>(V2_PROGRAM_METRICS.slice(0, 6));
const GAUGES = new Set<string>(V1_GAUGE_METRICS);
const INT64_MAX = (1n << 63n) - 1n;
const MAX_HOURS_IN_MONTH = 31 * 24;

export type Metric = V1Metric | V2Metric;
const METRIC_KEY = new Map<string, number>([
  ...V2_PROGRAM_METRICS.map((m, i) => [m, 1 + i] as [string, number]),
  ...V1_METRICS.map((m, i) => [m, 101 + i] as [string, number]),
]);
const REMAINDER_SALT = 0x0badc0de;

export function isGauge(m: string): boolean {
  return GAUGES.has(m);
}

function scaleOf(m: Metric): Scale {
  return (V2_SCALE as Record<string, Scale>)[m] ?? ((V1_SCALE as Record<string, Scale>)[m] as Scale);
}

function baseOf(key: number, m: Metric, divisor: number): number {
  const mk = METRIC_KEY.get(m) ?? 0;
  const sc = scaleOf(m);
  const h = hash3(key, mk, 0xba5e);
  if (h % 100 < sc.zeroPct) return 0;
  return Math.max(sc.lo, Math.floor((sc.lo + ((h >>> 7) % (sc.hi - sc.lo + 1))) / divisor));
}

function floorHour(ms: number): number {
  return Math.floor(ms / HOUR) * HOUR;
}
function ceilHour(ms: number): number {
  return Math.ceil(ms / HOUR) * HOUR;
}

/** The hours an entity has usage in: from the hour it was created to the end of the hour it was deleted. */
export function activeRange(created: number, deleted: number | undefined): [number, number] {
  return [floorHour(created), deleted === undefined ? Infinity : ceilHour(deleted)];
}

function series(
  key: number,
  m: Metric,
  range: [number, number],
  shape: number,
  bigint: boolean,
  divisor = 1,
  events?: ProgramEvents,
): Series {
  const sc = scaleOf(m);
  return {
    key,
    metric: METRIC_KEY.get(m) ?? 0,
    base: baseOf(key, m, divisor),
    from: range[0],
    to: range[1],
    shape,
    flat: bigint && (BYTE_MONTH_METRICS as readonly string[]).includes(m),
    zeroDays: sc.zeroDays,
    ...(events ? { events } : {}),
  };
}

/** The series whose sum is a program's value of metric `m` (v1 or v2). */
export function programSeries(p: Program, fws: readonly Framework[], m: Metric): Series[] {
  const big = p.big_factor !== undefined;
  const range = activeRange(p.created_at, p.deleted_at);
  if (!FRAMEWORK_METRIC_SET.has(m)) return [series(p.key, m, range, p.shape, big, 1, p.events)];
  const out = fws.map((f) => series(f.key, m, activeRange(f.created_at, f.deleted_at), p.shape, big, 1, p.events));
  // Usage that no framework accounts for, so framework-level reconciliation is not trivial.
  out.push(series(p.key ^ REMAINDER_SALT, m, range, p.shape, big, 4, p.events));
  return out;
}

/** The series of a framework's metric `m`, as the frameworks endpoint reports it (from `dataStart`). */
export function frameworkSeries(p: Program, f: Framework, m: Metric, dataStart: number): Series {
  const [from, to] = activeRange(f.created_at, f.deleted_at);
  return series(f.key, m, [Math.max(from, dataStart), to], p.shape, p.big_factor !== undefined, 1, p.events);
}

/** Bases of the series that make up a program's metric (for the 'bigint' multiplier). */
export function programSeriesBases(p: Program, fws: readonly Framework[], m: Metric): number[] {
  return programSeries(p, fws, m).map((s) => s.base);
}

/** The largest multiplier that keeps a month of peak hours of these series within int64. */
export function bigFactor(bases: readonly number[]): bigint {
  const bound = bases.reduce((a, b) => a + b, 0) * MAX_WEEKDAY * MAX_NOISE * MAX_SHAPE;
  if (bound === 0) return 1n;
  return INT64_MAX / (BigInt(MAX_HOURS_IN_MONTH) * BigInt(bound));
}

function dayAmount(s: Series, d: number): number {
  const h = hash3(s.key, s.metric, d);
  if (s.zeroDays && (h & 3) === 0) return 0;
  const noise = s.flat ? MAX_NOISE : 4 + ((h >>> 2) & 3);
  const amount = s.base * (WEEKDAY[(d + 4) % 7] as number) * noise;
  return s.events === undefined ? amount : withEvents(amount, s.events, d);
}

/** A day's amount under the program's labelled events: integer arithmetic, so every value stays an integer. */
function withEvents(amount: number, e: ProgramEvents, d: number): number {
  let a = amount;
  if (e.startDay !== undefined) a = d < e.startDay ? 0 : a * (e.startFactor ?? 1);
  if (e.drift !== undefined && d > e.drift.fromDay)
    a = Math.floor((a * (1000 + e.drift.permillePerDay * (d - e.drift.fromDay))) / 1000);
  return a * (e.spikes?.get(d) ?? 1);
}

/** The final value of one hour (brute force; used for settling hours and to check the closed form). */
export function hourValue(s: Series, h: number): number {
  if (h < s.from || h >= s.to || s.base === 0) return 0;
  const d = Math.floor(h / DAY);
  return dayAmount(s, d) * ((SHAPES[s.shape] as readonly number[])[(h - d * DAY) / HOUR] as number);
}

/** Sum of the final hourly values over the hours [a, b) (hour-aligned). */
export function sumFinal(s: Series, a: number, b: number): number {
  if (a < s.from) a = s.from;
  if (b > s.to) b = s.to;
  if (a >= b || s.base === 0) return 0;
  const prefix = PREFIX[s.shape] as number[];
  let total = 0;
  for (let d = Math.floor(a / DAY), ds = d * DAY; ds < b; d++, ds += DAY) {
    const lo = a > ds ? a : ds;
    const hi = b < ds + DAY ? b : ds + DAY;
    const amount = dayAmount(s, d);
    if (amount !== 0) total += amount * ((prefix[(hi - ds) / HOUR] as number) - (prefix[(lo - ds) / HOUR] as number));
  }
  return total;
}

/** Max of the final hourly values over the hours [a, b) (gauges). */
export function maxFinal(s: Series, a: number, b: number): number {
  if (a < s.from) a = s.from;
  if (b > s.to) b = s.to;
  if (a >= b || s.base === 0) return 0;
  const shape = SHAPES[s.shape] as readonly number[];
  let best = 0;
  for (let d = Math.floor(a / DAY), ds = d * DAY; ds < b; d++, ds += DAY) {
    const amount = dayAmount(s, d);
    if (amount === 0) continue;
    const j0 = ((a > ds ? a : ds) - ds) / HOUR;
    const j1 = ((b < ds + DAY ? b : ds + DAY) - ds) / HOUR;
    let m = 0;
    for (let j = j0; j < j1; j++) if ((shape[j] as number) > m) m = shape[j] as number;
    if (amount * m > best) best = amount * m;
  }
  return best;
}

/** Start of the first hour that is not yet final at `now` (closed less than 3 hours ago, or still open). */
export function settledUntil(now: number): number {
  return floorHour(now - (SETTLE_STEPS / 4 + 1) * HOUR) + HOUR;
}

/** Number of 15-minute refreshes an hour has had since it closed (0 while still open), capped at 12. */
export function settleSteps(hourStart: number, now: number): number {
  const since = now - (hourStart + HOUR);
  return since <= 0 ? 0 : Math.min(SETTLE_STEPS, Math.floor(since / SETTLE_STEP_MS));
}

/**
 * The reported value over the hours [a, b) of an entity whose hourly value is the sum of `parts`, at
 * clock `now`: final hours at their value, settling hours at floor(final * k / 12), hours from `now`
 * on not at all. Sum over hours, or max for a gauge (a single series). With `factor` (scenario
 * 'bigint') every hourly value is multiplied by it and the answer is a bigint.
 */
export function reportedValue(
  parts: readonly Series[],
  a: number,
  b: number,
  now: number,
  gauge: boolean,
  factor?: bigint,
): number | bigint {
  const settled = settledUntil(now);
  // Fast path: a bucket of final hours of one series (nearly every bucket of a page).
  if (b <= settled && parts.length === 1 && factor === undefined)
    return gauge ? maxFinal(parts[0] as Series, a, b) : sumFinal(parts[0] as Series, a, b);
  const closedEnd = b < settled ? b : settled;
  let base = 0;
  if (a < closedEnd) {
    if (gauge) for (const s of parts) base = Math.max(base, maxFinal(s, a, closedEnd));
    else for (const s of parts) base += sumFinal(s, a, closedEnd);
  }
  let extra = 0;
  let extraBig = 0n;
  const openEnd = Math.min(b, floorHour(now));
  for (let h = a > settled ? a : settled; h < openEnd; h += HOUR) {
    let v = 0;
    for (const s of parts) v += hourValue(s, h);
    if (v === 0) continue;
    const k = settleSteps(h, now);
    if (factor !== undefined) {
      const r = (factor * BigInt(v) * BigInt(k)) / BigInt(SETTLE_STEPS);
      if (gauge) throw new Error('gauges are never scaled');
      extraBig += r;
    } else {
      const r = Math.floor((v * k) / SETTLE_STEPS);
      if (gauge) extra = Math.max(extra, r);
      else extra += r;
    }
  }
  if (factor !== undefined) return factor * BigInt(base) + extraBig;
  return gauge ? Math.max(base, extra) : base + extra;
}
