// The benchmark's figures, derived from what each phase measured: pure functions, so that the
// arithmetic (ratios, the baseline's extrapolation, goals) is tested apart from the slow run.
import { STARTUP_GOALS, type StartupResult } from './startup.js';
import type { SandboxStats } from '../src/sandbox/stats.js';
import type { BaselineResult } from './baseline.js';
import type { PhaseMeasure } from './measure.js';
import type { PhaseTiming } from './phase.js';
import { endOfPhaseSplit } from './endOfPhase.js';
import type { SuiteResult } from './suite.js';
import type { BenchWindow, MinimumResult } from './minimum.js';

export interface CollectPhase extends PhaseMeasure {
  name: string;
  window: BenchWindow;
  requests: number;
  retries: number;
  /** 429s the collector received. */
  throttled: number;
  rows: number;
  exitCode: number;
  sandbox: SandboxStats;
  sandboxCpuS: number | null;
  /** Whether the sandbox replayed stored pages (rendered by an unmeasured warm-up) rather than rendering them. */
  replayed?: boolean;
  /** The fewest requests this window needs (bench/minimum.ts). */
  minimum: number | null;
  /** The phase process's first request, last answer and end (bench/phase.ts). */
  timing?: PhaseTiming;
}

/** The first run from an empty database with the inventory included (stopped once its plan is known). */
export interface FirstRunPhase {
  consumptionRequests: number;
  consumptionCommittedS: number;
  consumptionBoundS: number;
  inventoryRequestsPlanned: number;
  inventoryRequestsSent: number;
  /** A real steady-state daily run (a day later, the inventory complete): its inventory requests and all its requests. */
  steadyInventoryRequests: number;
  steadyRequests: number;
  /** Whether the set-up left the inventory complete (else the steady figure is not a steady state). */
  steadyInventoryComplete: boolean;
  projectedMinutesAt50: number;
}

/** A set-up collection: the same window a day earlier into the empty file, before the measured ones. Its
 *  requests are the first collection's, which knows no framework counts yet (not measured otherwise). */
export interface SetUpCollection {
  name: string;
  window: BenchWindow;
  requests: number;
  /** The fewest requests this window needs (bench/minimum.ts). */
  minimum: number | null;
}

export interface BenchReport {
  firstRun?: FirstRunPhase;
  /** The set-up collections, in order; the measured collections run on the file they filled. */
  setUp?: SetUpCollection[];
  mode: 'quick' | 'full';
  scenario: string;
  latencyMs: number;
  now: string;
  date: string;
  machine: string;
  command: string;
  perMinute: number;
  minimum: MinimumResult;
  /** The measured collections: the daily and the hourly window. */
  collections: CollectPhase[];
  /** The extra collection the report needed (null when the daily window covered the month). */
  month: CollectPhase | null;
  report: {
    month: string;
    wallS: number;
    cpuS: number;
    peakRssMb: number;
    rows: Record<string, number>;
    files: { path: string; rows: number; bytes: number }[];
    partial: boolean;
  };
  storeLoad: { rows: number; append_values_per_s: number; end_to_end_values_per_s: number; peak_rss_mb: number | null };
  baseline: (BaselineResult & PhaseMeasure & { sandbox: SandboxStats }) | null;
  baselinePrograms: number;
  /** `usage-pipeline --help` / `--version` start-up (bench/startup.ts). */
  startup?: StartupResult;
  sandboxPeakRssMb: number | null;
  /** The same collections at each capacity rate (CAPACITY_RATES), when measured. */
  capacity?: CapacityRow[];
  /** `npm test`, timed (full mode). */
  suite?: SuiteResult;
}

export const GOALS = {
  requestsOverMinimum: 1.0,
  wallOverBound: 1.05,
  violations: 0,
  peakRssMb: 512,
  /** Process start to the first request. */
  startupS: 0.4,
  cpuSPerMillionValues: 1.0,
  /** `npm test` on this 2-core machine. */
  suiteS: 240,
} as const;

export interface Figures {
  requests: number;
  minimum: number;
  requestsOverMinimum: number;
  wallS: number;
  boundS: number;
  wallOverBound: number;
  throttled: number;
  sandbox429: number;
  violations: number;
  rows: number;
  cpuS: number;
  cpuMsPerRequest: number;
  cpuSPerMillionValues: number;
  /** 1 - CPU / wall: the share of the run the collector's CPU leaves idle. */
  idleShare: number;
  /** CPU / bound: above 1, the collector cannot keep up with the API's rate whatever the concurrency. */
  cpuOverBound: number;
  sandboxCpuS: number | null;
  /** Sandbox CPU / collector CPU over the measured collections: the API side's share of the machine. */
  sandboxCpuShare: number | null;
  peakRssMb: number;
  baseline: null | {
    measured: {
      requests: number;
      rows: number;
      wallS: number;
      cpuS: number;
      programs: number;
      throttled: number;
      violations: number;
      peakRssMb: number;
    };
    requests: number;
    wallS: number;
    cpuS: number;
    oursOverBaseline: { wall: number; requests: number; cpu: number };
    baselineWallOverOurs: number;
  };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** The sandbox's CPU over the collector's for the same phase(s). */
export function sandboxCpuShare(sandboxCpuS: number, collectorCpuS: number): number {
  return collectorCpuS > 0 ? sandboxCpuS / collectorCpuS : 0;
}

/** Seconds the API's per-minute limit needs for `requests`: the physical bound of any collector. */
export function rateBoundS(requests: number, perMinute: number): number {
  return requests / (perMinute / 60);
}

/**
 * The baseline's figures for the whole collection, from its run on a subset: waiting for answers scales
 * with requests (counted for the whole world at the default page sizes, times the subset's measured
 * requests per counted page, which includes the empty pages its cursor-following costs), and everything
 * else (parsing, inserting) with values; CPU scales with values.
 */
export function extrapolateBaseline(
  measured: { requests: number; rows: number; httpS: number; wallS: number; cpuS: number },
  counted: { full: number; subset: number },
  fullRows: number,
): { requests: number; wallS: number; cpuS: number } {
  const requests = counted.subset > 0 ? (counted.full * measured.requests) / counted.subset : measured.requests;
  const perRequestS = measured.requests > 0 ? measured.httpS / measured.requests : 0;
  const perValueS = measured.rows > 0 ? (measured.wallS - measured.httpS) / measured.rows : 0;
  const cpuPerValue = measured.rows > 0 ? measured.cpuS / measured.rows : 0;
  return { requests, wallS: perRequestS * requests + perValueS * fullRows, cpuS: cpuPerValue * fullRows };
}

export function figures(b: BenchReport): Figures {
  const c = b.collections;
  const requests = sum(c.map((p) => p.requests));
  const wallS = sum(c.map((p) => p.wallS));
  const cpuS = sum(c.map((p) => p.cpuS));
  const rows = sum(c.map((p) => p.rows));
  const boundS = rateBoundS(requests, b.perMinute);
  const sandboxCpu = c.every((p) => p.sandboxCpuS !== null) ? sum(c.map((p) => p.sandboxCpuS as number)) : null;
  const phasesRss = [...c, ...(b.month ? [b.month] : []), { peakRssMb: b.report.peakRssMb }].map((p) => p.peakRssMb);
  const f: Figures = {
    requests,
    minimum: b.minimum.ours.total,
    requestsOverMinimum: requests / b.minimum.ours.total,
    wallS,
    boundS,
    wallOverBound: wallS / boundS,
    throttled: sum(c.map((p) => p.throttled)),
    sandbox429: sum(c.map((p) => p.sandbox.byStatus['429'] ?? 0)),
    violations: sum(c.map((p) => p.sandbox.violations.total)),
    rows,
    cpuS,
    cpuMsPerRequest: (cpuS / requests) * 1000,
    cpuSPerMillionValues: rows > 0 ? cpuS / (rows / 1e6) : 0,
    idleShare: 1 - cpuS / wallS,
    cpuOverBound: cpuS / boundS,
    sandboxCpuS: sandboxCpu,
    sandboxCpuShare: sandboxCpu === null ? null : sandboxCpuShare(sandboxCpu, cpuS),
    peakRssMb: Math.max(...phasesRss),
    baseline: null,
  };
  const base = b.baseline;
  if (base) {
    const est = extrapolateBaseline(
      base,
      { full: b.minimum.naive.total, subset: b.minimum.naiveSubset?.total ?? b.minimum.naive.total },
      rows,
    );
    f.baseline = {
      measured: {
        requests: base.requests,
        rows: base.rows,
        wallS: base.wallS,
        cpuS: base.cpuS,
        programs: base.programs,
        throttled: base.throttled,
        violations: base.sandbox.violations.total,
        peakRssMb: base.peakRssMb,
      },
      ...est,
      oursOverBaseline: { wall: wallS / est.wallS, requests: requests / est.requests, cpu: cpuS / est.cpuS },
      baselineWallOverOurs: est.wallS / wallS,
    };
  }
  return f;
}

/** The JSON object `--json` prints last. */
export function summaryJson(b: BenchReport): Record<string, unknown> {
  const f = figures(b);
  const span = spanOverBound(b.collections, b.perMinute);
  return {
    mode: b.mode,
    span_over_bound: span === null ? null : round(span, 3),
    startup_s: startupS(b.collections),
    end_of_phase_s: endOfPhaseS(b.collections),
    end_of_phase: endOfPhaseJson(b.collections),
    ...(b.suite ? { npm_test_wall_s: round(b.suite.wallS, 1), npm_test_exit: b.suite.exitCode } : {}),
    ...(b.capacity ? { capacity_rate_per_min: capacityRate(b.capacity), capacity: capacityJson(b.capacity) } : {}),
    wall_over_bound: round(f.wallOverBound, 3),
    requests_over_minimum: round(f.requestsOverMinimum, 3),
    violations: f.violations,
    throttled: f.throttled,
    peak_rss_mb: Math.round(f.peakRssMb),
    baseline_wall_over_ours: f.baseline ? round(f.baseline.baselineWallOverOurs, 2) : null,
    requests: f.requests,
    minimum_requests: f.minimum,
    wall_s: round(f.wallS, 2),
    bound_s: round(f.boundS, 2),
    values: f.rows,
    cpu_s: round(f.cpuS, 2),
    cpu_over_bound: round(f.cpuOverBound, 2),
    cpu_ms_per_request: round(f.cpuMsPerRequest, 1),
    cpu_s_per_million_values: round(f.cpuSPerMillionValues, 2),
    idle_share: round(f.idleShare, 3),
    store_load_values_per_s: b.storeLoad.append_values_per_s,
    report_wall_s: round(b.report.wallS, 2),
    sandbox_cpu_s: f.sandboxCpuS === null ? null : round(f.sandboxCpuS, 2),
    sandbox_cpu_share: f.sandboxCpuShare === null ? null : round(f.sandboxCpuShare, 3),
    sandbox_peak_rss_mb: b.sandboxPeakRssMb === null ? null : Math.round(b.sandboxPeakRssMb),
    baseline_requests_over_ours: f.baseline ? round(1 / f.baseline.oursOverBaseline.requests, 2) : null,
    baseline_cpu_over_ours: f.baseline ? round(1 / f.baseline.oursOverBaseline.cpu, 2) : null,
    ...(b.setUp && b.setUp.length > 0
      ? {
          first_collection_requests: sum(b.setUp.map((x) => x.requests)),
          first_collection_minimum: sum(b.setUp.map((x) => x.minimum ?? 0)),
        }
      : {}),
    ...(b.firstRun
      ? {
          first_run_consumption_over_bound: round(b.firstRun.consumptionCommittedS / b.firstRun.consumptionBoundS, 3),
          inventory_requests_first_run: b.firstRun.inventoryRequestsPlanned,
          inventory_share_steady: round(b.firstRun.steadyInventoryRequests / Math.max(1, b.firstRun.steadyRequests), 3),
          inventory_requests_steady: b.firstRun.steadyInventoryRequests,
          requests_steady: b.firstRun.steadyRequests,
          steady_inventory_complete: b.firstRun.steadyInventoryComplete,
          first_run_projected_minutes_at_50_per_min: round(b.firstRun.projectedMinutesAt50, 1),
          first_run_consumption_minutes_at_50_per_min: round(b.firstRun.consumptionRequests / 50, 1),
        }
      : {}),
    ...(b.startup
      ? {
          cli_help_ms: b.startup.cli_help_ms,
          cli_help_rss_mb: b.startup.cli_help_rss_mb,
          cli_version_ms: b.startup.cli_version_ms,
          cli_version_rss_mb: b.startup.cli_version_rss_mb,
        }
      : {}),
  };
}

/** The API rates the capacity runs measure, requests per minute: the limit, twice and four times it. */
export const CAPACITY_RATES = [700, 1_400, 2_800] as const;

/** One collection at one rate: the request span against the rate's bound, and what it cost. */
export interface CapacityRow {
  perMinute: number;
  phase: string;
  requests: number;
  minimum: number | null;
  /** First request to last answer. */
  spanS: number | null;
  /** The minimum requests at `perMinute`. */
  boundS: number | null;
  spanOverBound: number | null;
  /** The busiest route's requests at the per-route-per-second cap: above boundS, that cap binds, not the rate. */
  routeBoundS: number;
  cpuS: number;
  rows: number;
  cpuMsPerRequest: number;
  cpuSPerMillionValues: number;
  peakRssMb: number;
  violations: number;
  throttled: number;
  startupS: number | null;
  endOfPhaseS: number | null;
  exitCode: number;
}

/** The first request to the last answer over the rate bound of the fewest requests; null when unknown. */
export function spanOverBound(phases: CollectPhase[], perMinute: number): number | null {
  if (phases.length === 0 || phases.some((p) => p.httpSpanS === null || p.minimum === null)) return null;
  const bound = rateBoundS(sum(phases.map((p) => p.minimum as number)), perMinute);
  return bound > 0 ? sum(phases.map((p) => p.httpSpanS as number)) / bound : null;
}

/** The longest start-up (process start to first request) of the phases, in seconds; null if none sent one. */
export function startupS(phases: CollectPhase[]): number | null {
  const xs = phases.flatMap((p) => (p.timing?.firstRequestS != null ? [p.timing.firstRequestS] : []));
  return xs.length > 0 ? round(Math.max(...xs), 2) : null;
}

/** Per collection, the end of its phase split into the last commits, checkpoint, alerts and publishing. */
function endOfPhaseJson(phases: CollectPhase[]): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const p of phases) {
    const e = endOfPhaseSplit(p.timing);
    if (e)
      out[p.name] = {
        commit_s: round(e.commitS, 2),
        checkpoint_s: round(e.checkpointS, 2),
        alerts_s: round(e.alertsS, 2),
        publishing_s: round(e.publishingS, 2),
      };
  }
  return out;
}

/** Seconds after the last answer until the phase ended (commit, checkpoint, alerts, publishing), summed. */
export function endOfPhaseS(phases: CollectPhase[]): number | null {
  const xs = phases.flatMap((p) => (p.timing?.lastAnswerS != null ? [p.timing.endS - p.timing.lastAnswerS] : []));
  return xs.length === phases.length && xs.length > 0 ? round(sum(xs), 2) : null;
}

export function capacityRow(p: CollectPhase, perMinute: number, perSecondPerRoute: number): CapacityRow {
  const boundS = p.minimum === null ? null : rateBoundS(p.minimum, perMinute);
  const busiest = Math.max(0, ...Object.values(p.sandbox.byRoute));
  return {
    perMinute,
    phase: p.name,
    requests: p.requests,
    minimum: p.minimum,
    spanS: p.httpSpanS,
    boundS,
    spanOverBound: p.httpSpanS !== null && boundS ? p.httpSpanS / boundS : null,
    routeBoundS: busiest / perSecondPerRoute,
    cpuS: p.cpuS,
    rows: p.rows,
    cpuMsPerRequest: p.requests > 0 ? (p.cpuS / p.requests) * 1000 : 0,
    cpuSPerMillionValues: p.rows > 0 ? p.cpuS / (p.rows / 1e6) : 0,
    peakRssMb: p.peakRssMb,
    violations: p.sandbox.violations.total,
    throttled: p.throttled,
    startupS: p.timing?.firstRequestS ?? null,
    endOfPhaseS: p.timing?.lastAnswerS != null ? p.timing.endS - p.timing.lastAnswerS : null,
    exitCode: p.exitCode,
  };
}

/**
 * The fastest rate at which every collection measured at it kept its span within `goal` times its bound,
 * exited 0 and broke no limit; null when none did.
 */
export function capacityRate(rows: CapacityRow[], goal: number = GOALS.wallOverBound): number | null {
  const rates = [...new Set(rows.map((r) => r.perMinute))].sort((a, b) => b - a);
  const ok = (r: CapacityRow) =>
    r.spanOverBound !== null && r.spanOverBound <= goal + 1e-9 && r.violations === 0 && r.exitCode === 0;
  return rates.find((rate) => rows.filter((r) => r.perMinute === rate).every(ok)) ?? null;
}

export function capacityJson(rows: CapacityRow[]): Record<string, unknown>[] {
  const r2 = (x: number | null, d: number) => (x === null ? null : round(x, d));
  return rows.map((r) => ({
    per_minute: r.perMinute,
    phase: r.phase,
    requests: r.requests,
    minimum_requests: r.minimum,
    span_s: r2(r.spanS, 2),
    bound_s: r2(r.boundS, 2),
    span_over_bound: r2(r.spanOverBound, 3),
    route_bound_s: round(r.routeBoundS, 2),
    cpu_s: round(r.cpuS, 2),
    cpu_ms_per_request: round(r.cpuMsPerRequest, 2),
    cpu_s_per_million_values: round(r.cpuSPerMillionValues, 2),
    peak_rss_mb: Math.round(r.peakRssMb),
    violations: r.violations,
    throttled: r.throttled,
    startup_s: r2(r.startupS, 2),
    end_of_phase_s: r2(r.endOfPhaseS, 2),
  }));
}

export function capacityTable(rows: CapacityRow[]): string {
  const f = (x: number | null, d: number) => (x === null ? 'n/a' : x.toFixed(d));
  return markdownTable(
    [
      'rate/min',
      'phase',
      'requests / minimum',
      'span / bound (s)',
      'span / bound',
      'route bound (s)',
      'CPU ms/request',
      'CPU s/M values',
      'peak RSS MB',
      'start-up s',
      'end of phase s',
      '429s',
      'violations',
    ],
    rows.map((r) => [
      String(r.perMinute),
      r.phase,
      `${r.requests} / ${r.minimum ?? 'n/a'}`,
      `${f(r.spanS, 1)} / ${f(r.boundS, 1)}`,
      f(r.spanOverBound, 3),
      `${r.routeBoundS.toFixed(1)}${r.boundS !== null && r.routeBoundS > r.boundS ? ' (binds)' : ''}`,
      r.cpuMsPerRequest.toFixed(2),
      r.cpuSPerMillionValues.toFixed(2),
      String(Math.round(r.peakRssMb)),
      f(r.startupS, 2),
      f(r.endOfPhaseS, 2),
      String(r.throttled),
      String(r.violations),
    ]),
  );
}

function round(x: number, digits: number): number {
  const k = 10 ** digits;
  return Math.round(x * k) / k;
}

const n0 = (x: number) => Math.round(x).toLocaleString('en-US');
const n1 = (x: number) => x.toFixed(1);
const n2 = (x: number) => x.toFixed(2);
const mb = (x: number | null) => (x === null ? 'n/a' : `${n0(x)} MB`);

function verdict(ok: boolean, miss: string): string {
  return ok ? 'met' : `**missed**: ${miss}`;
}

/** The one table: each figure, its goal, whether it was met, and what limits it. */
export function benchTable(b: BenchReport): string {
  const f = figures(b);
  const rowsOut: string[][] = [];
  const add = (figure: string, value: string, goal: string, met: string, limit: string) =>
    rowsOut.push([figure, value, goal, met, limit]);
  requestRows(b, f, add);
  phaseTimeRows(b, add);
  costRows(b, f, add);
  comparisonRows(b, f, add);
  suiteRow(b, add);
  return markdownTable(['figure', 'value', 'goal', 'verdict', 'limited by'], rowsOut);
}

/** Adds one row of the table: the figure, its value, the goal, the verdict and what limits it. */
type AddRow = (figure: string, value: string, goal: string, met: string, limit: string) => void;

/** The requests against the minimum, the wall time against the rate-limit bound, the 429s. */
function requestRows(b: BenchReport, f: ReturnType<typeof figures>, add: AddRow): void {
  const rpm = `${b.perMinute}/min`;
  add(
    'requests / minimum pages',
    `${n0(f.requests)} / ${n0(f.minimum)} = ${n2(f.requestsOverMinimum)}`,
    '1.00',
    verdict(
      f.requestsOverMinimum <= GOALS.requestsOverMinimum + 1e-9,
      `by ${n2(f.requestsOverMinimum - 1)} (${n0(f.requests - f.minimum)} requests)`,
    ),
    'the API (page sizes, one 403 per ineligible org and version, the org listing, the empty page an exactly full one may cost)',
  );
  if (b.setUp && b.setUp.length > 0) {
    const requests = sum(b.setUp.map((x) => x.requests));
    const minimum = sum(b.setUp.map((x) => x.minimum ?? 0));
    add(
      'requests / minimum, first collection (the set-up: the same windows a day earlier into the empty file)',
      `${b.setUp.map((x) => `${x.name} ${n0(x.requests)} / ${x.minimum === null ? 'n/a' : n0(x.minimum)}`).join('; ')}; all ${n0(requests)} / ${n0(minimum)} = ${n2(requests / minimum)}`,
      '',
      '',
      'nothing known of the frameworks yet: an exactly full frameworks page may cost an empty one',
    );
  }
  add(
    'wall / rate-limit bound',
    `${n1(f.wallS)} s / ${n1(f.boundS)} s = ${n2(f.wallOverBound)}`,
    `≤ ${GOALS.wallOverBound}`,
    verdict(
      f.wallOverBound <= GOALS.wallOverBound,
      `by ${n2(f.wallOverBound - GOALS.wallOverBound)} (${n2(f.wallOverBound)}×)`,
    ),
    f.cpuOverBound > 1
      ? `collector CPU: it needs ${n2(f.cpuOverBound)}× the bound in CPU seconds`
      : `the API's rate (${rpm}, less the limiter's headroom)`,
  );
  add(
    '429s received / sandbox violations',
    `${f.throttled} (sandbox 429s ${f.sandbox429}) / ${f.violations}`,
    '0 / 0',
    verdict(f.throttled === 0 && f.violations === 0, `${f.throttled} 429s, ${f.violations} violations`),
    'the limiter (sliding windows, even pacing)',
  );
}

/** Per collection: start-up to the first request, the request span against its bound, the end of the phase. */
function phaseTimeRows(b: BenchReport, add: AddRow): void {
  const c = b.collections;
  const starts = c.map((p) => p.timing?.firstRequestS ?? null);
  const known = starts.filter((x): x is number => x !== null);
  const startText = (x: number | null | undefined) => (x == null ? 'n/a' : `${n2(x)} s`);
  add(
    'start-up to first request',
    c.map((p, i) => `${p.name} ${startText(starts[i])}`).join('; '),
    `≤ ${GOALS.startupS} s`,
    known.length === c.length ? verdict(Math.max(...known) <= GOALS.startupS, `${n2(Math.max(...known))} s`) : '',
    'Node, the modules, the config and opening the store',
  );
  const spans = c.map((p) => spanOverBound([p], b.perMinute));
  add(
    `request span / bound per collection (${b.perMinute}/min, minimum requests)`,
    c
      .map((p, i) => {
        const bound = p.minimum === null ? null : rateBoundS(p.minimum, b.perMinute);
        const s = spans[i];
        return `${p.name} ${p.httpSpanS === null ? 'n/a' : n1(p.httpSpanS)} / ${bound === null ? 'n/a' : n1(bound)} s = ${s == null ? 'n/a' : n2(s)}`;
      })
      .join('; '),
    `≤ ${GOALS.wallOverBound}`,
    spanVerdict(
      spans.filter((x): x is number => x !== null),
      c.length,
    ),
    'the pace (1.03 with the limiter’s headroom), then CPU',
  );
  const ends = c.map((p) => endOfPhaseSplit(p.timing));
  add(
    'end of phase: last commits / checkpoint / alerts / publishing',
    c
      .map((p, i) => {
        const e = ends[i];
        return e
          ? `${p.name} ${n2(e.commitS)} / ${n2(e.checkpointS)} / ${n2(e.alertsS)} / ${n2(e.publishingS)} s`
          : `${p.name} n/a`;
      })
      .join('; '),
    '',
    '',
    'the disk (commits, checkpoint), DuckDB (alerts), the analyst copy',
  );
}

/** Met when every collection's span / bound is known and within the goal. */
function spanVerdict(known: number[], collections: number): string {
  if (known.length !== collections) return '';
  const worst = Math.max(...known);
  return verdict(worst <= GOALS.wallOverBound + 1e-9, `${n2(worst)}×`);
}

/** `npm test`'s wall time, when the run measured it. */
function suiteRow(b: BenchReport, add: AddRow): void {
  const s = b.suite;
  if (!s) return;
  add(
    '`npm test` wall time',
    `${n1(s.wallS)} s, exit ${s.exitCode ?? 'killed'}${s.summary.length ? ` (${s.summary.join('; ')})` : ''}`,
    `≤ ${GOALS.suiteS} s`,
    s.exitCode !== 0
      ? '**failed**'
      : verdict(s.wallS <= GOALS.suiteS, `${n1(s.wallS)} s, ${n2(s.wallS / GOALS.suiteS)}× the goal`),
    'the slowest test files, two workers on two cores',
  );
}

/** What the run cost: values, CPU, the DuckDB load alone, the report, the memory. */
function costRows(b: BenchReport, f: ReturnType<typeof figures>, add: AddRow): void {
  add('values loaded', n0(f.rows), '', '', 'the data (non-zero values)');
  add(
    'collector CPU',
    `${n1(f.cpuS)} s: ${n1(f.cpuMsPerRequest)} ms/request, ${n2(f.cpuSPerMillionValues)} s per million values`,
    '≪ bound',
    verdict(f.cpuOverBound < 1, `CPU is ${n2(f.cpuOverBound)}× the rate-limit bound`),
    'CPU (2 cores shared with the sandbox and DuckDB threads)',
  );
  add(
    'collector CPU per million values',
    n2(f.cpuSPerMillionValues),
    `≤ ${GOALS.cpuSPerMillionValues.toFixed(1)} s`,
    verdict(f.cpuSPerMillionValues <= GOALS.cpuSPerMillionValues, `${n2(f.cpuSPerMillionValues)} s`),
    'the page scan, staging and DuckDB’s appends',
  );
  add(
    'rate-limit budget left idle by CPU (1 − CPU/wall)',
    `${(f.idleShare * 100).toFixed(0)} %`,
    'wide margin',
    verdict(f.idleShare > 0.5, `${(f.idleShare * 100).toFixed(0)} % idle`),
    'CPU',
  );
  if (f.sandboxCpuS !== null && f.sandboxCpuShare !== null)
    add(
      'sandbox CPU (the API side, its own process) / its share of the collector’s',
      `${n1(f.sandboxCpuS)} s / ${(f.sandboxCpuShare * 100).toFixed(1)} %`,
      b.collections.every((p) => p.replayed) ? '< 5 % (replayed pages)' : '',
      b.collections.every((p) => p.replayed)
        ? verdict(f.sandboxCpuShare < 0.05, `the sandbox took ${(f.sandboxCpuShare * 100).toFixed(1)} %`)
        : '',
      'CPU (rendering or replaying the pages)',
    );
  add(
    'DuckDB load throughput, alone (store-load)',
    `${n0(b.storeLoad.append_values_per_s)} values/s appended; ${n0(b.storeLoad.end_to_end_values_per_s)} values/s to commit (${n0(b.storeLoad.rows)} values)`,
    '',
    '',
    'CPU and disk',
  );
  const reportRows = Object.entries(b.report.rows)
    .map(([k, v]) => `${k} ${n0(v)}`)
    .join(', ');
  const files = b.report.files.map((x) => `${x.path.split('/').at(-1)} ${(x.bytes / 1024).toFixed(0)} KB`).join(', ');
  add(
    `report ${b.report.month}`,
    `${n1(b.report.wallS)} s, ${mb(b.report.peakRssMb)} peak RSS; rows: ${reportRows}; files: ${files}`,
    '',
    b.report.partial ? 'PARTIAL coverage' : '',
    'CPU (DuckDB queries, workbook writing) and disk',
  );
  const rss = [
    ...b.collections.map((p) => `${p.name} ${mb(p.peakRssMb)}`),
    ...(b.month ? [`${b.month.name} ${mb(b.month.peakRssMb)}`] : []),
    `report ${mb(b.report.peakRssMb)}`,
    ...(f.baseline ? [`baseline ${mb(f.baseline.measured.peakRssMb)}`] : []),
    `store-load ${mb(b.storeLoad.peak_rss_mb)}`,
    `sandbox ${mb(b.sandboxPeakRssMb)}`,
  ].join('; ');
  add(
    'peak RSS per phase',
    rss,
    `< ${GOALS.peakRssMb} MB`,
    verdict(f.peakRssMb < GOALS.peakRssMb, `peak ${mb(f.peakRssMb)}, ${n1(f.peakRssMb / GOALS.peakRssMb)}× the goal`),
    'memory held by staging (see notes)',
  );
}

/** The naive baseline and the CLI's start-up. */
function comparisonRows(b: BenchReport, f: ReturnType<typeof figures>, add: AddRow): void {
  if (f.baseline) {
    const bl = f.baseline;
    add(
      'naive baseline (measured on a subset)',
      `first ${b.baselinePrograms} programs per organization: ${n0(bl.measured.requests)} requests, ${n0(bl.measured.rows)} values, ${n1(bl.measured.wallS)} s, ${n1(bl.measured.cpuS)} s CPU, ${bl.measured.throttled} 429s`,
      '',
      '',
      'latency (one request at a time) and row-by-row INSERTs',
    );
    add(
      'naive baseline, whole collection (extrapolated)',
      `${n0(bl.requests)} requests, ${n1(bl.wallS)} s, ${n1(bl.cpuS)} s CPU`,
      '',
      '',
      'per request (wait) and per value (parse + insert), from the subset',
    );
    add(
      'ours / baseline',
      `wall ${n2(bl.oursOverBaseline.wall)}, requests ${n2(bl.oursOverBaseline.requests)}, CPU ${n2(bl.oursOverBaseline.cpu)} (baseline takes ${n1(bl.baselineWallOverOurs)}× our wall time)`,
      '< 1',
      '',
      '',
    );
  }
  if (b.startup) {
    const s = b.startup;
    const ok =
      s.cli_help_ms < STARTUP_GOALS.ms &&
      s.cli_help_rss_mb < STARTUP_GOALS.rssMb &&
      s.cli_version_ms < STARTUP_GOALS.ms &&
      s.cli_version_rss_mb < STARTUP_GOALS.rssMb;
    add(
      'CLI start-up (--help, --version)',
      `${s.cli_help_ms} ms ${s.cli_help_rss_mb} MB, ${s.cli_version_ms} ms ${s.cli_version_rss_mb} MB (median of ${s.runs})`,
      `< ${STARTUP_GOALS.ms} ms, < ${STARTUP_GOALS.rssMb} MB`,
      verdict(ok, 'a command module loads a heavy dependency at start-up'),
      'Node.js itself (about 40 MB, 40 ms)',
    );
  }
}

/** Per phase: what each collection cost and what the sandbox saw. */
export function phaseTable(b: BenchReport): string {
  const rows = [...b.collections, ...(b.month ? [b.month] : [])].map((p) => {
    const bound = rateBoundS(p.requests, b.perMinute);
    return [
      p.name,
      `${p.window.from} .. ${p.window.to}`,
      n0(p.requests),
      p.minimum === null ? 'n/a' : `${n0(p.minimum)} (${n2(p.requests / p.minimum)})`,
      n0(p.rows),
      n1(p.wallS),
      p.httpSpanS === null ? 'n/a' : n1(p.httpSpanS),
      n1(bound),
      n2(p.wallS / bound),
      n1(p.cpuS),
      p.sandboxCpuS === null ? 'n/a' : `${n1(p.sandboxCpuS)} (${n2(sandboxCpuShare(p.sandboxCpuS, p.cpuS))})`,
      `${p.throttled} / ${p.sandbox.violations.total}`,
      mb(p.peakRssMb),
      String(p.exitCode),
    ];
  });
  return markdownTable(
    [
      'phase',
      'window',
      'requests',
      'minimum (ratio)',
      'values',
      'wall s',
      'first request to last answer s',
      'bound s',
      'wall/bound',
      'CPU s',
      'sandbox CPU s (share of CPU s)',
      '429s / violations',
      'peak RSS',
      'exit',
    ],
    rows,
  );
}

export function benchMarkdown(b: BenchReport): string {
  return [
    `Run ${b.date.slice(0, 16).replace('T', ' ')} UTC on ${b.machine}.`,
    '',
    `Command: \`${b.command}\` (scenario \`${b.scenario}\`, ${b.latencyMs} ms added latency per request, clock pinned at ${b.now}).`,
    '',
    benchTable(b),
    '',
    'Per phase:',
    '',
    phaseTable(b),
    '',
    ...(b.capacity
      ? [
          'Capacity: the daily and hourly collections at each API rate (the collector configured to match):',
          '',
          capacityTable(b.capacity),
          '',
          `capacity_rate_per_min: ${capacityRate(b.capacity) ?? 'none'} (every collection within ${GOALS.wallOverBound}× span / bound).`,
          '',
        ]
      : []),
    '```json',
    JSON.stringify(summaryJson(b)),
    '```',
  ].join('\n');
}

export function markdownTable(header: string[], rows: string[][]): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}
