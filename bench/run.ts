// `npm run bench [-- --quick] [-- --json]`: measures the collector against the API's rate-limit bound and
// against a naive baseline, in one run, on the sandbox's `large` scenario with added latency, and prints
// one table (and with --json one JSON object on the last line). The full mode also writes BENCHMARKS.md's
// generated section. Benchmarks never run inside `npm test`.
import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { BURST_PER_SECOND_PER_ROUTE, RATE_LIMIT_PER_MINUTE } from '../src/contract/api.js';
import { monthRange } from '../src/domain/calendar.js';
import { collectCommand } from '../src/cli/collect.js';
import { createLogger } from '../src/log.js';
import type { SandboxStats } from '../src/sandbox/stats.js';
import { runBaseline, type BaselineResult } from './baseline.js';
import { profileTable, summariseProfile, type CpuProfile } from './cpuprofile.js';
import { childRssSampler, measure, procCpuSeconds, procMemoryMb, type PhaseMeasure } from './measure.js';
import { partAt } from './endOfPhase.js';
import type { CollectOutcome, PhaseOutput, PhaseSpec, ReportOutcome } from './phase.js';
import type { BenchWindow, MinimumResult } from './minimum.js';
import { startSandboxProcess } from './sandboxProcess.js';
import {
  benchMarkdown,
  benchTable,
  CAPACITY_RATES,
  capacityJson,
  capacityRate,
  capacityRow,
  capacityTable,
  GOALS,
  summaryJson,
  type CapacityRow,
  type BenchReport,
  type CollectPhase,
  type SetUpCollection,
  sandboxCpuShare,
} from './table.js';
import { benchPlan, type BenchPlan } from './windows.js';
import { measureStartup, startupLine } from './startup.js';
import { runSuite, type SuiteResult } from './suite.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BENCH_DIR = join(ROOT, '.bench');
const run = promisify(execFile);
const DAY_MS = 86_400_000;
/** The client's limits for set-up collections, which the sandbox serves unthrottled (POST /__sandbox/pace). */
const UNTHROTTLED_TOML = '[api.rate_limit]\nper_minute = 100000\nper_second_per_route = 10000\n';

interface Mode {
  name: 'quick' | 'full';
  scenario: string;
  days: number;
  hours: number;
  /** The baseline collects the first N programs of each organization. */
  baselinePrograms: number;
  storeLoadRows: number;
  /** Quick: the report covers the daily window in Parquet only (the workbook of 10,000 programs takes over a minute). */
  quickReport: boolean;
}

const MODES: Record<'quick' | 'full', Mode> = {
  // The same 10,000 programs and 100,000 frameworks, so the request counts and the rate bound are the full
  // run's; short windows keep the values (and the time) small.
  quick: {
    name: 'quick',
    scenario: 'large',
    days: 2,
    hours: 3,
    baselinePrograms: 20,
    storeLoadRows: 500_000,
    quickReport: true,
  },
  full: {
    name: 'full',
    scenario: 'large',
    days: 30,
    hours: 48,
    baselinePrograms: 50,
    storeLoadRows: 2_000_000,
    quickReport: false,
  },
};

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    'latency-ms': { type: 'string', default: '100' },
    now: { type: 'string', default: '2026-11-21T10:30:00Z' },
    write: { type: 'boolean' },
    profile: { type: 'boolean', default: false },
    'skip-baseline': { type: 'boolean', default: false },
    'skip-suite': { type: 'boolean', default: false },
    'startup-only': { type: 'boolean', default: false },
    'report-only': { type: 'boolean', default: false },
    capacity: { type: 'boolean', default: false },
    rates: { type: 'string', default: CAPACITY_RATES.join(',') },
    growth: { type: 'boolean', default: false },
    orgs: { type: 'string', default: '3' },
    days: { type: 'string', default: '7,30,91,365' },
    rounds: { type: 'string' },
  },
});

const mode = MODES[flags.quick ? 'quick' : 'full'];
const latencyMs = Number(flags['latency-ms']);
const fixedNow = Date.parse(flags.now);
if (!Number.isInteger(latencyMs) || latencyMs < 0 || Number.isNaN(fixedNow)) {
  console.error(
    'usage: npm run bench -- [--quick] [--json] [--capacity [--rates 700,1400,2800]] [--latency-ms N] [--now ISO] [--write] [--profile] [--startup-only] [--skip-baseline] [--skip-suite]',
  );
  process.exit(64);
}
const capacityRates = flags.rates.split(',').map(Number);
if (capacityRates.some((r) => !Number.isInteger(r) || r <= 0)) {
  console.error(`--rates takes requests per minute separated by commas (default ${CAPACITY_RATES.join(',')})`);
  process.exit(64);
}
const writeMd = flags.write ?? (mode.name === 'full' && !flags.capacity);
// With --json, stdout carries only the JSON object; progress goes to stderr.
const say = (msg: string) => (flags.json ? process.stderr : process.stdout).write(msg + '\n');
const log = createLogger({ level: 'warn' });

async function main(): Promise<void> {
  if (flags['report-only']) return reportLarge();
  if (flags.growth) return growth();
  // First, on a quiet machine: the command line's start-up (--help, --version).
  const startup = await measureStartup(ROOT);
  say(startupLine(startup));
  if (flags['startup-only']) {
    if (flags.json) process.stdout.write(JSON.stringify(startup) + '\n');
    return;
  }
  const plan = benchPlan(fixedNow, mode.days, mode.hours);
  const windows = [plan.daily, plan.hourly];
  const dir = join(BENCH_DIR, flags.capacity ? `${mode.name}-capacity` : mode.name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const dbPath = join(dir, 'usage.duckdb');
  const started = new Date();
  say(
    `bench ${mode.name}: scenario ${mode.scenario}, latency ${latencyMs} ms, now ${flags.now}; daily ${plan.daily.from}..${plan.daily.to}, hourly ${plan.hourly.from}..${plan.hourly.to}`,
  );
  const { minimum, monthMinimum, setUpNow, setUpWindows, setUpMinimum } = await minimums(plan, windows);

  // Replaying: each measured collection's pages are rendered by an unmeasured warm-up (warmReplay), so
  // the sandbox's CPU during the phase is serving, not generating, and leaves the 2 cores to the collector.
  const sandbox = await startSandboxProcess({ scenario: mode.scenario, latencyMs, now: flags.now, replay: true });
  const sandboxRss = childRssSampler(sandbox.pid);
  const b: Bench = { sandbox, dir, dbPath };
  try {
    if (flags.capacity) {
      await setUpCollections(b, setUpNow, setUpWindows, setUpMinimum);
      return await capacityOnly(b, plan, minimum);
    }
    const firstRun = await firstAndSteady(b, plan);
    const setUp = await setUpCollections(b, setUpNow, setUpWindows, setUpMinimum);
    // The capacity runs start from the file as the set-up left it, as the measured phases do.
    const setUpDb = keepCopy(dbPath, join(dir, 'set-up.duckdb'));
    const { daily, hourly, month } = await collectPhases(b, plan, minimum, monthMinimum);
    const report = await reportPhase(b, plan);
    // The DuckDB load path alone (bench/store-load.ts), in its own process.
    const storeLoad = await storeLoadChild(mode.storeLoadRows);
    say(
      `store load: ${storeLoad.append_values_per_s} values/s appended, ${storeLoad.end_to_end_values_per_s} values/s to commit`,
    );

    const baseline = await baselinePhase(b, windows);
    const sandboxPeak = sandboxRss.stop() ?? procMemoryMb(sandbox.pid)?.peak ?? null;
    const bench: BenchReport = {
      firstRun,
      setUp,
      ...benchHeader(started),
      minimum,
      collections: [daily, hourly],
      month,
      report,
      storeLoad,
      baseline,
      baselinePrograms: mode.baselinePrograms,
      sandboxPeakRssMb: sandboxPeak,
      startup,
      // The phases above are the capacity run at the API's rate; the faster rates on the set-up's copy.
      capacity: [
        ...capacityRows([daily, hourly], RATE_LIMIT_PER_MINUTE),
        ...(await capacityRuns(b, plan, minimum, setUpDb, CAPACITY_RATES.slice(1))),
      ],
    };
    // Last, with nothing else running: the suite as a user runs it (full mode).
    if (mode.name === 'full' && !flags['skip-suite']) bench.suite = await timedSuite(dir);
    say('');
    say(benchTable(bench));
    if (bench.capacity) say('\n' + capacityTable(bench.capacity));
    writeFileSync(join(dir, 'result.json'), JSON.stringify(bench, null, 2) + '\n');
    if (writeMd) writeBenchmarksMd(benchMarkdown(bench));
    if (flags.json) process.stdout.write(JSON.stringify(summaryJson(bench)) + '\n');
  } finally {
    sandboxRss.stop();
    await sandbox.stop();
  }
}

/** The measured collections: the daily window, the hourly window, and (in full mode) a whole month. */
async function collectPhases(
  b: Bench,
  plan: BenchPlan,
  minimum: Awaited<ReturnType<typeof minimums>>['minimum'],
  monthMinimum: Awaited<ReturnType<typeof minimums>>['monthMinimum'],
) {
  // No pause between phases: each paces evenly below the per-minute limit from its first request, so
  // the requests of two phases back to back never exceed the limit in any rolling minute.
  const daily = await collectPhase(b, `daily ${mode.days} d`, plan.daily, minimum.perWindow[0]?.total ?? null);
  const hourly = await collectPhase(
    b,
    `hourly ${mode.hours} h`,
    plan.hourly,
    minimum.perWindow[1]?.total ?? null,
    flags.profile,
  );
  let month: CollectPhase | null = null;
  if (plan.monthWindow && !mode.quickReport) {
    month = await collectPhase(b, `month ${plan.month} (monthly)`, plan.monthWindow, monthMinimum?.ours.total ?? null);
  }
  return { daily, hourly, month };
}

/** `npm test`, timed, its summary printed. */
async function timedSuite(dir: string): Promise<SuiteResult> {
  say('npm test ...');
  const suite = await runSuite(ROOT, dir);
  say(`npm test: ${suite.wallS.toFixed(1)} s, exit ${suite.exitCode ?? 'killed'}; ${suite.summary.join('; ')}`);
  return suite;
}

/** Which run this is, where and when: the report's header. */
function benchHeader(started: Date) {
  return {
    mode: mode.name,
    scenario: mode.scenario,
    latencyMs,
    now: flags.now,
    date: started.toISOString(),
    machine: `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown'}), ${Math.round(totalmem() / 2 ** 30)} GB RAM, Node ${process.version}`,
    command: `npm run bench --${mode.name === 'quick' ? ' --quick' : ''}${latencyMs !== 100 ? ` --latency-ms ${latencyMs}` : ''}`,
    perMinute: RATE_LIMIT_PER_MINUTE,
  };
}

/** Copies a database file (and its WAL) to `to`; returns `to`. */
function keepCopy(from: string, to: string): string {
  copyFileSync(from, to);
  if (existsSync(`${from}.wal`)) copyFileSync(`${from}.wal`, `${to}.wal`);
  return to;
}

/** The capacity rows of collections measured at `perMinute`, with the API's per-route cap. */
function capacityRows(phases: CollectPhase[], perMinute: number): CapacityRow[] {
  return phases.map((p) => capacityRow(p, perMinute, BURST_PER_SECOND_PER_ROUTE));
}

/**
 * The daily and hourly collections at each rate, each rate on its own copy of the set-up's file: the
 * sandbox's per-minute limit and the collector's api.rate_limit.per_minute both at the rate; the
 * per-route-per-second cap stays the API's on both sides (its bound is reported beside the rate's).
 */
async function capacityRuns(
  b: Bench,
  plan: BenchPlan,
  minimum: MinimumResult,
  setUpDb: string,
  rates: readonly number[],
): Promise<CapacityRow[]> {
  const rows: CapacityRow[] = [];
  const project = readFileSync(join(ROOT, 'config', 'usage.toml'), 'utf8');
  for (const perMinute of rates) {
    const dbPath = keepCopy(setUpDb, join(b.dir, `capacity-${perMinute}.duckdb`));
    const config = join(b.dir, `capacity-${perMinute}.toml`);
    writeFileSync(config, withRate(project, perMinute));
    const at = { ...b, dbPath };
    const rate = { perMinute, config };
    const daily = await collectPhase(
      at,
      `daily ${mode.days} d`,
      plan.daily,
      minimum.perWindow[0]?.total ?? null,
      flags.profile,
      rate,
    );
    const hourly = await collectPhase(
      at,
      `hourly ${mode.hours} h`,
      plan.hourly,
      minimum.perWindow[1]?.total ?? null,
      flags.profile,
      rate,
    );
    rows.push(...capacityRows([daily, hourly], perMinute));
    for (const f of [dbPath, `${dbPath}.wal`, `${dbPath}.tmp`]) rmSync(f, { recursive: true, force: true });
  }
  return rows;
}

/** The project's config with api.rate_limit.per_minute set to `perMinute` (every other setting its own). */
function withRate(toml: string, perMinute: number): string {
  const section = toml.indexOf('[api.rate_limit]');
  const at = toml.slice(section).search(/^per_minute\s*=\s*\d+/m);
  if (section < 0 || at < 0) throw new Error('config/usage.toml has no [api.rate_limit] per_minute to set');
  const start = section + at;
  const end = toml.indexOf('\n', start);
  return `${toml.slice(0, start)}per_minute = ${perMinute}${toml.slice(end)}`;
}

/** `--capacity`: the set-up, then only the capacity runs at every rate; a table, and with --json its object. */
async function capacityOnly(b: Bench, plan: BenchPlan, minimum: MinimumResult): Promise<void> {
  const setUpDb = keepCopy(b.dbPath, join(b.dir, 'set-up.duckdb'));
  const rows = await capacityRuns(b, plan, minimum, setUpDb, capacityRates);
  const rate = capacityRate(rows);
  say('');
  say(capacityTable(rows));
  say(`capacity_rate_per_min: ${rate ?? 'none'} (every collection within ${GOALS.wallOverBound}x span / bound)`);
  const summary = { mode: mode.name, capacity_rate_per_min: rate, capacity: capacityJson(rows) };
  writeFileSync(join(b.dir, 'result.json'), JSON.stringify(summary, null, 2) + '\n');
  if (flags.json) process.stdout.write(JSON.stringify(summary) + '\n');
}

/** What the phases share: the sandbox process, the bench folder and the measured database. */
interface Bench {
  sandbox: Awaited<ReturnType<typeof startSandboxProcess>>;
  dir: string;
  dbPath: string;
}

/** The fewest requests each window needs, computed from the world in child processes. */
async function minimums(plan: BenchPlan, windows: BenchWindow[]) {
  // The minimum is computed from the world in its own process: the large world is big, and it is not the collector's memory.
  const minimum = await computeMinimumChild({
    scenario: mode.scenario,
    now: flags.now,
    windows,
    programsPerOrg: mode.baselinePrograms,
  });
  const monthMinimum =
    plan.monthWindow && !mode.quickReport
      ? await computeMinimumChild({ scenario: mode.scenario, now: flags.now, windows: [plan.monthWindow] })
      : null;
  // The set-up: the same collections a day earlier (the store a daily cron has filled by the measured run).
  const setUpNow = fixedNow - DAY_MS;
  const setUpPlan = benchPlan(setUpNow, mode.days, mode.hours);
  const setUpWindows = [
    { name: `daily ${mode.days} d`, window: setUpPlan.daily },
    { name: `hourly ${mode.hours} h`, window: setUpPlan.hourly },
    ...(setUpPlan.monthWindow && !mode.quickReport
      ? [{ name: `month ${setUpPlan.month} (monthly)`, window: setUpPlan.monthWindow }]
      : []),
  ];
  const setUpMinimum = await computeMinimumChild({
    scenario: mode.scenario,
    now: flags.now,
    clock: new Date(setUpNow).toISOString(),
    windows: setUpWindows.map((x) => x.window),
  });
  say(
    `minimum requests: ${minimum.ours.total} (${minimum.ours.pages} pages, ${minimum.ours.forbidden} 403s, ${minimum.ours.orgListing} org listings)`,
  );
  return { minimum, monthMinimum, setUpNow, setUpWindows, setUpMinimum };
}

/** One measured collection in its own process, with the sandbox's counters and CPU for it. */
async function collectPhase(
  { sandbox, dir, dbPath }: Bench,
  name: string,
  w: BenchWindow,
  minimumRequests: number | null,
  profile = false,
  rate: { perMinute: number; config: string } | null = null,
): Promise<CollectPhase> {
  await warmReplay({ sandbox, dir, dbPath }, w, rate?.perMinute);
  await sandbox.resetStats();
  const cpu0 = procCpuSeconds(sandbox.pid);
  const profilePath = profile ? join(dir, `${name.replace(/\W+/g, '-')}.cpuprofile`) : undefined;
  const { result, m, timing } = await phaseChild<CollectOutcome>({
    kind: 'collect',
    root: ROOT,
    db: dbPath,
    ...(rate ? { config: rate.config } : {}),
    apiKey: sandbox.apiKey,
    baseUrl: sandbox.baseUrl,
    now: fixedNow,
    granularity: w.granularity,
    from: w.from,
    to: w.to,
    ...(profilePath ? { profile: profilePath } : {}),
  });
  if (profilePath) {
    say(`CPU profile of the phase: ${profilePath}`);
    say(profileTable(summariseProfile(JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile, 15)));
  }
  const stats = await sandbox.stats();
  const cpu1 = procCpuSeconds(sandbox.pid);
  const phase: CollectPhase = {
    name,
    window: w,
    requests: result.requests,
    retries: result.retries,
    throttled: result.throttled,
    rows: result.rows,
    exitCode: result.exitCode,
    sandbox: stats,
    sandboxCpuS: cpu0 !== null && cpu1 !== null ? cpu1 - cpu0 : null,
    replayed: true,
    minimum: minimumRequests,
    ...m,
    ...(timing ? { timing } : {}),
  };
  const sandboxCpu =
    phase.sandboxCpuS === null
      ? 'n/a'
      : `${phase.sandboxCpuS.toFixed(2)} s (sandbox_cpu_share ${sandboxCpuShare(phase.sandboxCpuS, m.cpuS).toFixed(3)}; replay ${stats.replay?.hits ?? 0} hits, ${stats.replay?.misses ?? 0} rendered, ${Math.round((stats.replay?.storedBytes ?? 0) / 2 ** 20)} MB stored)`;
  say(
    `${rate ? `at ${rate.perMinute}/min, ` : ''}${name}: ${result.requests} requests, ${result.rows} values, ${m.wallS.toFixed(1)} s wall, ${m.cpuS.toFixed(1)} s CPU, sandbox CPU ${sandboxCpu}, peak RSS ${Math.round(m.peakRssMb)} MB (V8 heap ${m.atPeak.heapMb}, external ${m.atPeak.externalMb}, other ${m.atPeak.otherMb}; during ${partAt(timing, m.atPeak.atS ?? 0)}), exit ${result.exitCode}`,
  );
  return phase;
}

/**
 * Set-up, not measured: the collection of window `w` on a copy of the measured file, with the sandbox
 * unthrottled, so that the replaying sandbox has rendered (at the same clock) every page the measured
 * collection asks for, after emptying what the last phase left. The phase's stats count what was still
 * rendered (`replay.misses`).
 */
async function warmReplay(
  { sandbox, dir, dbPath }: Bench,
  w: BenchWindow,
  perMinute: number = RATE_LIMIT_PER_MINUTE,
): Promise<void> {
  const copy = join(dir, 'warm-up.duckdb');
  copyFileSync(dbPath, copy);
  if (existsSync(`${dbPath}.wal`)) copyFileSync(`${dbPath}.wal`, `${copy}.wal`);
  const config = join(dir, 'warm-up.toml');
  writeFileSync(config, UNTHROTTLED_TOML);
  await sandbox.setPace({ latency_ms: 0, per_minute: 10_000_000, per_second_per_route: 1_000_000 });
  await sandbox.setClock(new Date(fixedNow).toISOString());
  // The clock stands still across phases: the last phase's pages would fill the replay's room.
  await sandbox.clearReplay();
  try {
    const r = await collectCommand({
      db: copy,
      config,
      cwd: ROOT,
      env: { USAGE_API_KEY: sandbox.apiKey },
      baseUrl: sandbox.baseUrl,
      now: () => fixedNow,
      granularity: w.granularity,
      from: w.from,
      to: w.to,
      inventory: 'never',
      log,
    });
    if (r.exitCode !== 0) throw new Error(`the replay warm-up of ${w.from}..${w.to} exited with ${r.exitCode}`);
  } finally {
    await sandbox.setPace({
      latency_ms: latencyMs,
      per_minute: perMinute,
      per_second_per_route: BURST_PER_SECOND_PER_ROUTE,
    });
    for (const f of [copy, `${copy}.wal`, `${copy}.tmp`]) rmSync(f, { recursive: true, force: true });
  }
}

/**
 * The first run (an empty database, the inventory included) and the steady state a day later.
 */
async function firstAndSteady({ sandbox, dir }: Bench, plan: BenchPlan): Promise<BenchReport['firstRun']> {
  // The first run: an empty database, the inventory included. Consumption is committed first; once the
  // inventory's plan is known (its programs listing read) the run is stopped: the rest is projected from
  // the request counts at 50 requests/min rather than waited for.
  const firstDb = join(dir, 'first.duckdb');
  const stop = new AbortController();
  let requestsDone: () => number = () => 0;
  let consumptionAt = 0;
  let planned = 0;
  let consumptionRequests = 0;
  const t0 = performance.now();
  const first = await collectCommand({
    db: firstDb,
    cwd: ROOT,
    env: { USAGE_API_KEY: sandbox.apiKey },
    baseUrl: sandbox.baseUrl,
    now: () => fixedNow,
    granularity: plan.daily.granularity,
    from: plan.daily.from,
    to: plan.daily.to,
    inventory: 'auto',
    log,
    signal: stop.signal,
    progress: {
      onPage: () => {
        // the bench draws no progress bar
      },
      attach: (done) => {
        requestsDone = done;
      },
      onPlanned: (n) => {
        planned = n;
        if (consumptionAt > 0 && n > consumptionRequests + 1) stop.abort();
      },
      onPhase: (phase) => {
        if (phase === 'inventory') {
          consumptionAt = performance.now();
          consumptionRequests = requestsDone();
        }
      },
    },
  });
  const firstPrograms = first.scopes.length; // keeps the result referenced for the log line below
  const inventoryPlanned = planned - consumptionRequests;
  const { fill, steady } = await steadyState({ sandbox, dir }, plan, firstDb);
  const firstRun = {
    consumptionRequests,
    consumptionCommittedS: (consumptionAt - t0) / 1000,
    consumptionBoundS: (consumptionRequests * 60) / RATE_LIMIT_PER_MINUTE,
    inventoryRequestsPlanned: inventoryPlanned,
    inventoryRequestsSent: first.inventoryRequests,
    steadyInventoryRequests: steady.inventoryRequests,
    steadyRequests: steady.requests,
    steadyInventoryComplete: fill.inventoryRemaining === 0 && fill.status === 'complete',
    projectedMinutesAt50: (consumptionRequests + inventoryPlanned) / 50,
  };
  say(
    `first run (${firstPrograms} scopes): consumption ${consumptionRequests} requests committed in ${firstRun.consumptionCommittedS.toFixed(1)} s (bound ${firstRun.consumptionBoundS.toFixed(1)} s); inventory planned ${inventoryPlanned} requests; ${firstRun.projectedMinutesAt50.toFixed(0)} min at 50/min`,
  );
  return firstRun;
}

/**
 * The steady state after the first run on `firstDb`: its inventory finished unthrottled (set-up), then
 * a daily run a day later, paced like a real account.
 */
async function steadyState({ sandbox, dir }: Pick<Bench, 'sandbox' | 'dir'>, plan: BenchPlan, firstDb: string) {
  // The steady state, measured rather than projected: the first run's inventory is finished with the sandbox
  // unthrottled (set-up, not measured: ~20,000 listings would take half an hour at 700/min), then a real
  // incremental daily run a day later on that database, paced like a real account, inventory 'auto'.
  const fillConfig = join(dir, 'fill.toml');
  writeFileSync(fillConfig, `${UNTHROTTLED_TOML}\n[inventory]\nmax_request_share = 1\n`);
  await sandbox.setPace({ latency_ms: 0, per_minute: 10_000_000, per_second_per_route: 1_000_000 });
  const fillT0 = performance.now();
  const fill = await collectCommand({
    db: firstDb,
    config: fillConfig,
    cwd: ROOT,
    env: { USAGE_API_KEY: sandbox.apiKey },
    baseUrl: sandbox.baseUrl,
    now: () => fixedNow,
    granularity: plan.daily.granularity,
    from: plan.daily.from,
    to: plan.daily.to,
    inventory: 'auto',
    log,
  });
  const fillS = (performance.now() - fillT0) / 1000;
  await sandbox.setPace({
    latency_ms: latencyMs,
    per_minute: RATE_LIMIT_PER_MINUTE,
    per_second_per_route: BURST_PER_SECOND_PER_ROUTE,
  });
  const steadyNow = fixedNow + DAY_MS;
  await sandbox.setClock(new Date(steadyNow).toISOString());
  await sandbox.resetStats();
  const steady = await collectCommand({
    db: firstDb,
    cwd: ROOT,
    env: { USAGE_API_KEY: sandbox.apiKey },
    baseUrl: sandbox.baseUrl,
    now: () => steadyNow,
    granularity: 'daily',
    inventory: 'auto',
    log,
  });
  await sandbox.setClock(new Date(fixedNow).toISOString());
  say(
    `steady state: set-up finished the inventory in ${fillS.toFixed(1)} s (${fill.inventoryRequests} requests, remaining ${fill.inventoryRemaining}); a daily run a day later: ${steady.requests} requests, ${steady.inventoryRequests} on the inventory, exit ${steady.exitCode}`,
  );
  return { fill, steady };
}

/** `--growth`: bench/growth.ts, its table, and with --json its object last. */
async function growth(): Promise<void> {
  const { DEFAULT_ROUNDS, growthBench, growthJson } = await import('./growth.js');
  const days = flags.days.split(',').map(Number);
  const orgs = Number(flags.orgs);
  const rounds = Number(flags.rounds ?? DEFAULT_ROUNDS);
  if (!days.every((d) => Number.isInteger(d) && d >= 7) || !Number.isInteger(orgs) || orgs < 1)
    throw new Error(
      `--days ${flags.days} --orgs ${flags.orgs}: give whole days (at least 7) and a number of organizations`,
    );
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds ${flags.rounds}: give a whole number, at least 1`);
  const steps = await growthBench({ json: flags.json, orgs, days, rounds }, say);
  if (flags.json) process.stdout.write(JSON.stringify(growthJson(steps)) + '\n');
}

/** The same collections a day earlier into the measured file (set-up, not measured); their requests. */
async function setUpCollections(
  { sandbox, dir, dbPath }: Bench,
  setUpNow: number,
  setUpWindows: { name: string; window: BenchWindow }[],
  setUpMinimum: MinimumResult,
): Promise<SetUpCollection[]> {
  // The measured collections run on a file that already holds the same collections made a day earlier,
  // as a store filled by a daily cron does: the collector then knows each program's frameworks from the
  // usage it stored (inventory off, as in the measured phases), which sizes its frameworks requests. On an
  // empty file it knows nothing, so that first collection's requests are reported apart (`setUp`). Set-up,
  // not measured: the sandbox unthrottled, its clock a day back.
  const setUpConfig = join(dir, 'set-up.toml');
  writeFileSync(setUpConfig, UNTHROTTLED_TOML);
  await sandbox.setPace({ latency_ms: 0, per_minute: 10_000_000, per_second_per_route: 1_000_000 });
  await sandbox.setClock(new Date(setUpNow).toISOString());
  const setUp: SetUpCollection[] = [];
  for (const [i, { name, window: w }] of setUpWindows.entries()) {
    const r = await collectCommand({
      db: dbPath,
      config: setUpConfig,
      cwd: ROOT,
      env: { USAGE_API_KEY: sandbox.apiKey },
      baseUrl: sandbox.baseUrl,
      now: () => setUpNow,
      granularity: w.granularity,
      from: w.from,
      to: w.to,
      inventory: 'never',
      log,
    });
    if (r.exitCode !== 0)
      throw new Error(`the set-up collection ${name} (${w.from}..${w.to}) exited with ${r.exitCode}`);
    setUp.push({ name, window: w, requests: r.requests, minimum: setUpMinimum.perWindow[i]?.total ?? null });
  }
  await sandbox.setPace({
    latency_ms: latencyMs,
    per_minute: RATE_LIMIT_PER_MINUTE,
    per_second_per_route: BURST_PER_SECOND_PER_ROUTE,
  });
  await sandbox.setClock(new Date(fixedNow).toISOString());
  say(
    `set-up, the same collections a day earlier into the empty file (not measured): ${setUp.map((x) => `${x.name} ${x.requests} requests (minimum ${x.minimum ?? 'n/a'})`).join(', ')}`,
  );
  return setUp;
}

/** The report of one billing month (quick: of the daily window), in its own process. */
async function reportPhase({ dir, dbPath }: Bench, plan: BenchPlan): Promise<BenchReport['report']> {
  // The report of one billing month (quick: of the daily window), from the database the collections filled.
  const outDir = join(dir, 'reports');
  const period = mode.quickReport
    ? { from: plan.daily.from.slice(0, 10), to: plan.daily.to.slice(0, 10) }
    : { month: plan.month };
  const formats: ('parquet' | 'xlsx')[] = mode.quickReport ? ['parquet'] : ['parquet', 'xlsx'];
  const { result: report, m: reportM } = await phaseChild<ReportOutcome>({
    kind: 'report',
    root: ROOT,
    db: dbPath,
    outDir,
    now: fixedNow,
    formats,
    ...period,
  });
  const reportFiles = report.files.map((f) => {
    const path = resolve(report.dir, f.path);
    return {
      path: f.path,
      rows: f.rows,
      bytes: existsSync(path) ? statSync(path).size : existsSync(f.path) ? statSync(f.path).size : 0,
    };
  });
  const reportLabel = mode.quickReport ? `${period.from}..${period.to} (Parquet only)` : plan.month;
  say(
    `report ${reportLabel}: ${reportM.wallS.toFixed(1)} s, ${Object.values(report.rows).reduce((a, b) => a + b, 0)} rows`,
  );
  return {
    month: reportLabel,
    wallS: reportM.wallS,
    cpuS: reportM.cpuS,
    peakRssMb: reportM.peakRssMb,
    rows: report.rows,
    files: reportFiles,
    partial: report.partial,
  };
}

/** The naive baseline, unless skipped. */
async function baselinePhase({ sandbox, dir }: Bench, windows: BenchWindow[]): Promise<BenchReport['baseline']> {
  // The naive baseline on a subset of each organization's programs, extrapolated per request and per value.
  let baseline: (BaselineResult & PhaseMeasure & { sandbox: SandboxStats }) | null = null;
  if (!flags['skip-baseline']) {
    await sandbox.resetStats();
    const { result, m } = await measure(() =>
      runBaseline({
        baseUrl: sandbox.baseUrl,
        apiKey: sandbox.apiKey,
        dbPath: join(dir, 'naive.duckdb'),
        windows,
        programsPerOrg: mode.baselinePrograms,
      }),
    );
    baseline = { ...result, ...m, sandbox: await sandbox.stats() };
    say(
      `baseline (first ${mode.baselinePrograms} programs per organization): ${result.requests} requests, ${result.rows} values, ${m.wallS.toFixed(1)} s wall, ${m.cpuS.toFixed(1)} s CPU`,
    );
  }
  return baseline;
}

async function computeMinimumChild(args: {
  scenario: string;
  now: string;
  clock?: string;
  windows: BenchWindow[];
  programsPerOrg?: number;
}): Promise<MinimumResult> {
  const { stdout } = await run(
    process.execPath,
    [fileURLToPath(new URL('./minimum.js', import.meta.url)), JSON.stringify(args)],
    { maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as MinimumResult;
}

export interface StoreLoadResult {
  rows: number;
  append_s: number;
  commit_s: number;
  checkpoint_s: number;
  append_values_per_s: number;
  end_to_end_values_per_s: number;
  peak_rss_mb: number | null;
}

async function storeLoadChild(rows: number): Promise<StoreLoadResult> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./store-load.js', import.meta.url)), String(rows)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const rss = childRssSampler(child.pid as number);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const peak = rss.stop();
  if (code !== 0) throw new Error(`store-load exited with ${code}`);
  const last = out.trim().split('\n').at(-1) ?? '{}';
  return { ...(JSON.parse(last) as Omit<StoreLoadResult, 'peak_rss_mb'>), peak_rss_mb: peak };
}

/**
 * Runs one phase in its own process (bench/phase.ts), as an operator runs each command: its peak RSS is
 * that process's own, not what earlier phases left in this one.
 */
async function phaseChild<T>(spec: PhaseSpec): Promise<PhaseOutput<T>> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./phase.js', import.meta.url)), JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`the ${spec.kind} phase exited with ${code}`);
  return JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as PhaseOutput<T>;
}

/** Peak RSS the report of the `large` month must stay under, the collector's goal too. */
const REPORT_RSS_GOAL_MB = 512;
/** Goal for the workbook's size: a file a person can open. */
const WORKBOOK_GOAL_MB = 50;

/** Collects the `large` month's daily consumption into `dbPath` (incremental), from its own sandbox. */
async function collectLargeMonth(dbPath: string, plan: BenchPlan): Promise<void> {
  const monthStart = `${plan.month}-01T00:00:00Z`;
  const monthEnd = new Date(monthRange(plan.month).end).toISOString().replace('.000Z', 'Z');
  say(`bench report-only: scenario large, month ${plan.month} (daily data), latency ${latencyMs} ms, now ${flags.now}`);
  const sandbox = await startSandboxProcess({ scenario: 'large', latencyMs, now: flags.now });
  try {
    const { result, m } = await measure(() =>
      collectCommand({
        db: dbPath,
        cwd: ROOT,
        env: { USAGE_API_KEY: sandbox.apiKey },
        baseUrl: sandbox.baseUrl,
        now: () => fixedNow,
        // The month's consumption only: a first inventory of 10,000 programs is ~20,000 requests (half an
        // hour at the rate limit; the first-run phase measures it). The report then names programs by id.
        granularity: 'daily',
        from: monthStart,
        to: monthEnd,
        inventory: 'never',
        log,
      }),
    );
    say(
      `collect ${plan.month} daily: ${result.requests} requests, ${result.rows} values, ${m.wallS.toFixed(1)} s, exit ${result.exitCode}`,
    );
  } finally {
    await sandbox.stop();
  }
}

/**
 * `npm run bench -- --report-only`: the `large` month in every format. Collects the month's daily data
 * into .bench/report/usage.duckdb (incremental: a second run reuses what is there), then runs the
 * product's own `report` command in a child process, as an operator would, and samples its RSS.
 */
async function reportLarge(): Promise<void> {
  const dir = join(BENCH_DIR, 'report');
  mkdirSync(dir, { recursive: true });
  const dbPath = join(dir, 'usage.duckdb');
  const plan = benchPlan(fixedNow, 1, 1);
  await collectLargeMonth(dbPath, plan);
  const outDir = join(dir, 'reports');
  rmSync(outDir, { recursive: true, force: true });
  const formats = 'parquet,xlsx,html,focus';
  const args = [
    fileURLToPath(new URL('../src/cli/main.js', import.meta.url)),
    'report',
    '--db',
    dbPath,
    '--month',
    plan.month,
    '--format',
    formats,
    '--out',
    outDir,
  ];
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const rss = childRssSampler(child.pid as number);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (out += s));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  const wallS = (performance.now() - t0) / 1000;
  const peak = rss.stop();
  say(out.trim());
  const monthDir = join(outDir, plan.month);
  const files = existsSync(monthDir)
    ? readdirSync(monthDir)
        .sort()
        .map((name) => ({ name, bytes: statSync(join(monthDir, name)).size }))
    : [];
  const xlsx = files.find((f) => f.name.endsWith('.xlsx'));
  const summary = {
    phase: 'report_large',
    month: plan.month,
    formats,
    command: `node ${args.map((a) => a.replace(ROOT, '')).join(' ')}`,
    exit_code: code,
    wall_s: Number(wallS.toFixed(1)),
    peak_rss_mb: peak === null ? null : Math.round(peak),
    rss_goal_mb: REPORT_RSS_GOAL_MB,
    files: files.map((f) => ({ name: f.name, mb: Number((f.bytes / 2 ** 20).toFixed(2)) })),
    xlsx_mb: xlsx ? Number((xlsx.bytes / 2 ** 20).toFixed(2)) : null,
    xlsx_goal_mb: WORKBOOK_GOAL_MB,
  };
  say('');
  say(
    `report ${plan.month}, ${formats}: exit ${code}, ${summary.wall_s} s wall, peak RSS ${summary.peak_rss_mb} MB (goal < ${REPORT_RSS_GOAL_MB})`,
  );
  for (const f of summary.files) say(`  ${f.name}  ${f.mb} MB`);
  writeFileSync(join(dir, 'result.json'), JSON.stringify(summary, null, 2) + '\n');
  if (flags.json) process.stdout.write(JSON.stringify(summary) + '\n');
  if (code !== 0 && code !== 2) process.exitCode = 1;
  else if ((peak ?? 0) >= REPORT_RSS_GOAL_MB || (xlsx?.bytes ?? 0) >= WORKBOOK_GOAL_MB * 2 ** 20) {
    say('over a goal (see above)');
    process.exitCode = 1;
  }
}

const BEGIN = '<!-- bench:begin (generated by `npm run bench`; edit outside these markers) -->';
const END = '<!-- bench:end -->';
function writeBenchmarksMd(section: string): void {
  const file = join(ROOT, 'BENCHMARKS.md');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmarks\n\n${BEGIN}\n${END}\n`;
  const a = text.indexOf(BEGIN);
  const b = text.indexOf(END);
  const next =
    a >= 0 && b > a
      ? text.slice(0, a + BEGIN.length) + '\n' + section + '\n' + text.slice(b)
      : `${text.trimEnd()}\n\n${BEGIN}\n${section}\n${END}\n`;
  writeFileSync(file, next);
  say(`wrote ${file}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
