// `npm run bench:soak -- [--runs N] [--seed S] [--kills K] [--max-wall S] [--daemon-log FILE] [--json]`:
// one daemon (the built CLI's `schedule`) driven through N scheduled runs against the sandbox over HTTP,
// their shared clock moved forward between runs by an hour up to a week, SIGKILLed at random moments and
// restarted. At the end: the database equals the sandbox's truth, every due month's export exists once,
// and the daemon's RSS holds steady over a kill-free stretch. Exit 1 when a check fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { acquireRunLock, RunLockBusyError, type RunLock } from '../src/app/lock.js';
import { packageRoot } from '../src/config/packageRoot.js';
import { previousMonth } from '../src/domain/calendar.js';
import { prng } from '../src/sandbox/hash.js';
import { startSandbox, type Sandbox } from '../src/sandbox/server.js';
import { procMemoryMb } from './measure.js';
import { checkDatabase, checkExports, dueMonths, type ExportCheck, type TruthCheck } from './soakCheck.js';

/** The daemon's environment variable for a driven clock (src/schedule/daemon.ts CLOCK_FILE_ENV). */
const CLOCK_FILE_ENV = 'USAGE_SCHEDULE_CLOCK_FILE';
const HOUR = 3_600_000;
/** The clock starts here (a 10th, so the first export is due at once) and only moves forward. */
const START = Date.UTC(2025, 6, 10, 9, 0, 0);
const EXPORT_DAY = 2;
/** Kills fall in the first part of the soak; the rest is one process's kill-free stretch (for its RSS). */
const KILL_SHARE = 0.4;
/** The RSS is read after this many runs of the last process, and again after its last run. */
const RSS_FIRST_RUN = 50;
// The RSS compared is the least of RSS_SAMPLES readings RSS_SAMPLE_MS apart (quietRssMb).
const RSS_SAMPLES = 10;
const RSS_SAMPLE_MS = 100;
const RUN_TIMEOUT_MS = 180_000;
/** The longest single move of the clock: several daily jobs fall in the weeks in which a month's export is due. */
const MAX_MOVE_MS = 7 * 24 * HOUR;

export interface SoakOptions {
  runs: number;
  kills: number;
  seed: number;
  /** Progress lines (default none). */
  progress?: (line: string) => void;
  /** A file to append the daemons' JSON log lines to (default none). */
  daemonLog?: string;
  /** Stop driving after this many seconds even if fewer runs are done (then the checks run as usual). */
  maxWallS?: number;
}

export interface SoakResult {
  runs: number;
  kills: number;
  seed: number;
  failed_runs: number;
  clock_start: string;
  clock_end: string;
  /** The last daemon process: its RSS after its RSS_FIRST_RUN-th run and after the soak's last run. */
  rss_run50_mb: number | null;
  rss_run1000_mb: number | null;
  rss_ratio: number | null;
  /** Soak run numbers at which those two were read, and the last process's own run count. */
  rss_runs: [number, number] | null;
  last_process_runs: number;
  db_equals_truth: boolean;
  exports_once: boolean;
  truth: TruthCheck;
  exports: ExportCheck;
  wall_s: number;
}

/**
 * The clock's step per run: mostly hours, sometimes days, now and then one or two weeks (a day on
 * average). Whole hours, since a run's id carries its start only to the second.
 */
export function clockStep(rand: () => number): number {
  const r = rand();
  if (r < 0.75) return HOUR * (1 + Math.floor(rand() * 12));
  if (r < 0.97) return HOUR * (12 + Math.floor(rand() * 84));
  return HOUR * (168 + Math.floor(rand() * 168));
}

/** The runs after which a kill is due: `kills` distinct ones in the first KILL_SHARE of the soak. */
export function killPlan(runs: number, kills: number, rand: () => number): Set<number> {
  const span = Math.max(kills, Math.floor(runs * KILL_SHARE));
  const plan = new Set<number>();
  while (plan.size < Math.min(kills, span)) plan.add(1 + Math.floor(rand() * span));
  return plan;
}

interface Paths {
  dir: string;
  dbPath: string;
  outDir: string;
  configPath: string;
  clockFile: string;
  /** Where the daemon's log lines are appended, if anywhere. */
  daemonLog?: string;
}

function writeConfig(paths: Paths, sb: Sandbox): void {
  writeFileSync(
    paths.configPath,
    [
      '[api]',
      `base_url = ${JSON.stringify(sb.baseUrl)}`,
      '[api.rate_limit]',
      'per_minute = 100000',
      'per_second_per_route = 1000',
      '[store]',
      `db = ${JSON.stringify(paths.dbPath)}`,
      '[report]',
      `out_dir = ${JSON.stringify(paths.outDir)}`,
      `prices = ${JSON.stringify(join(packageRoot(), 'config/prices.toml'))}`,
      'formats = ["parquet"]', // the export's set, link and manifest are the same; the Excel and HTML writers only cost time
      '[schedule]',
      // Slots every second or two of real time: the runs follow each other; the driven clock says what time it is.
      'hourly_collect = "* * * * * *"',
      'daily_collect = "*/2 * * * * *"',
      'monthly_export = "0 * * * * *"',
      `monthly_export_day = ${EXPORT_DAY}`,
    ].join('\n'),
  );
}

/** How often the soak tries the run lock while the daemon holds it. */
const LOCK_TRY_MS = 2;

/**
 * The run lock, tried every LOCK_TRY_MS up to RUN_TIMEOUT_MS: the daemon's queued runs take it again a few
 * milliseconds after each release, so the lock's own 250 ms poll could miss every gap for minutes.
 */
async function takeLockBetweenRuns(dbPath: string): Promise<RunLock> {
  const end = Date.now() + RUN_TIMEOUT_MS;
  for (;;) {
    try {
      return await acquireRunLock(dbPath, { waitMs: 0, command: 'soak clock' });
    } catch (err) {
      if (!(err instanceof RunLockBusyError) || Date.now() > end) throw err;
    }
    await delay(LOCK_TRY_MS);
  }
}

/** Sets the sandbox's and the daemon's clock together, holding the run lock so no job sees the change mid-run. */
async function moveClock(paths: Paths, sb: Sandbox, to: number): Promise<void> {
  const lock = await takeLockBetweenRuns(paths.dbPath);
  try {
    const tmp = `${paths.clockFile}.tmp`;
    writeFileSync(tmp, new Date(to).toISOString());
    renameSync(tmp, paths.clockFile);
    sb.setNow(to);
  } finally {
    await lock.release();
  }
}

/** One daemon process: its child, and the runs it has finished so far (read from its JSON log on stderr). */
interface Daemon {
  child: ChildProcess;
  finished: number;
  /** How many of `finished` the soak has counted so far. */
  counted: number;
  failed: number;
  exited: Promise<void>;
}

const RUN_END = /^job (finished|failed)/;

/** The message of one JSON log line ('' for anything else). */
function logMessage(line: string): string {
  try {
    return String((JSON.parse(line) as { msg?: unknown }).msg ?? '');
  } catch {
    return '';
  }
}

function startDaemon(paths: Paths, sb: Sandbox): Daemon {
  const child = spawn(
    process.execPath,
    [join(packageRoot(), 'dist/src/cli/main.js'), 'schedule', '--config', paths.configPath],
    {
      cwd: paths.dir,
      env: { ...process.env, USAGE_API_KEY: sb.apiKey, [CLOCK_FILE_ENV]: paths.clockFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const d: Daemon = {
    child,
    finished: 0,
    counted: 0,
    failed: 0,
    exited: new Promise((r) => child.once('exit', () => r())),
  };
  let rest = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (paths.daemonLog) appendFileSync(paths.daemonLog, chunk);
    const lines = (rest + chunk.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const msg of lines.map(logMessage)) {
      if (RUN_END.test(msg)) d.finished++;
      if (msg.startsWith('job failed')) d.failed++;
    }
  });
  return d;
}

async function waitForRun(d: Daemon, after: number): Promise<void> {
  const end = Date.now() + RUN_TIMEOUT_MS;
  while (d.finished <= after) {
    if (d.child.exitCode !== null) throw new Error(`the daemon exited (code ${d.child.exitCode}) during the soak`);
    if (Date.now() > end) throw new Error(`no daemon run finished within ${RUN_TIMEOUT_MS / 1000} s`);
    await delay(20);
  }
}

async function kill(d: Daemon): Promise<void> {
  d.child.kill('SIGKILL');
  await d.exited;
}

const rssMb = (pid: number | undefined): number | null => {
  const m = pid === undefined ? null : procMemoryMb(pid);
  return m ? Math.round(m.current * 10) / 10 : null;
};

/** The least RSS over a second's samples: one sample right after a run may catch the next queued run
 *  opening its database, which the idle process does not hold. */
async function quietRssMb(pid: number | undefined): Promise<number | null> {
  let least: number | null = null;
  for (let i = 0; i < RSS_SAMPLES; i++) {
    if (i > 0) await delay(RSS_SAMPLE_MS);
    const m = rssMb(pid);
    if (m !== null && (least === null || m < least)) least = m;
  }
  return least;
}

interface DriveState {
  daemon: Daemon;
  clock: number;
  runs: number;
  kills: number;
  failed: number;
  rss: { first: number | null; firstAt: number; last: number | null };
}

/** Adds the runs the daemon finished since the last count (some end while the clock is being moved). */
function count(s: DriveState): void {
  s.runs += s.daemon.finished - s.daemon.counted;
  s.daemon.counted = s.daemon.finished;
}

/** Kills the daemon at a random moment within about one run after the clock moved, and starts another. */
async function killAndRestart(s: DriveState, paths: Paths, sb: Sandbox, waitMs: number): Promise<void> {
  await delay(waitMs);
  await kill(s.daemon);
  s.kills++;
  s.failed += s.daemon.failed;
  count(s); // a run that ended before the kill still counts
  s.daemon = startDaemon(paths, sb);
  s.rss.first = null;
}

/** Runs the soak's loop: move the clock, let a run finish (or kill the daemon part-way), read the RSS. */
async function drive(opts: SoakOptions, paths: Paths, sb: Sandbox): Promise<DriveState> {
  const rand = prng(opts.seed);
  const killAt = [...killPlan(opts.runs, opts.kills, rand)].sort((a, b) => a - b);
  const s: DriveState = {
    daemon: startDaemon(paths, sb),
    clock: START,
    runs: 0,
    kills: 0,
    failed: 0,
    rss: { first: null, firstAt: 0, last: null },
  };
  let meanRunMs = 500;
  const deadline = performance.now() + (opts.maxWallS ?? Infinity) * 1000;
  let lastRuns = 0;
  // Until every planned kill is done too: runs counted in a burst (a restart's catch-up, a loaded
  // machine) can pass the last kill's run before its turn comes.
  while ((s.runs < opts.runs || s.kills < killAt.length) && performance.now() < deadline) {
    // One step per run since the last move (runs queued back to back often take the lock first), capped.
    let step = 0;
    for (let i = 0; i < Math.max(1, s.runs - lastRuns); i++) step += clockStep(rand);
    lastRuns = s.runs;
    s.clock += Math.min(step, MAX_MOVE_MS);
    await moveClock(paths, sb, s.clock);
    if (s.kills < killAt.length && s.runs + 1 >= (killAt[s.kills] as number)) {
      await killAndRestart(s, paths, sb, Math.floor(rand() * meanRunMs * 1.5));
      continue;
    }
    const before = s.runs;
    const started = performance.now();
    await waitForRun(s.daemon, s.daemon.counted);
    count(s);
    meanRunMs = 0.9 * meanRunMs + 0.1 * (performance.now() - started);
    if (s.daemon.finished >= RSS_FIRST_RUN && s.rss.first === null) {
      s.rss.first = await quietRssMb(s.daemon.child.pid);
      s.rss.firstAt = s.runs;
    }
    if (Math.floor(s.runs / 50) > Math.floor(before / 50) || s.runs >= opts.runs)
      opts.progress?.(
        `run ${s.runs}: clock ${new Date(s.clock).toISOString()}, kills ${s.kills}, rss ${rssMb(s.daemon.child.pid)} MB`,
      );
  }
  s.rss.last = await quietRssMb(s.daemon.child.pid);
  return s;
}

/** The daemon catches up a due export after its next daily job: give it until the deadline to do so. */
async function settleExports(outDir: string, months: string[], optional: string[]): Promise<void> {
  const end = Date.now() + 60_000;
  while (!checkExports(outDir, months, optional).once && Date.now() < end) await delay(250);
}

export interface Soak {
  result: SoakResult;
  dbPath: string;
  outDir: string;
  sandbox: Sandbox;
  /** Stops the sandbox and removes the soak's folder. */
  cleanup(): Promise<void>;
}

/** Runs the whole soak and its checks; the caller reads `result` and calls cleanup(). */
export async function soak(opts: SoakOptions): Promise<Soak> {
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'usage-soak-'));
  const paths: Paths = {
    dir,
    dbPath: join(dir, 'usage.duckdb'),
    outDir: join(dir, 'reports'),
    configPath: join(dir, 'usage.toml'),
    clockFile: join(dir, 'clock'),
    ...(opts.daemonLog ? { daemonLog: opts.daemonLog } : {}),
  };
  const sb = await startSandbox({
    port: 0,
    scenario: 'small',
    now: START,
    advance: false,
    limits: { perMinute: 100_000, perSecondPerRoute: 1_000 },
  });
  const cleanup = async () => {
    await sb.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    writeConfig(paths, sb);
    writeFileSync(paths.clockFile, new Date(START).toISOString());
    const s = await drive(opts, paths, sb);
    const months = dueMonths(START, s.clock, EXPORT_DAY);
    const optional = [previousMonth(s.clock)];
    opts.progress?.(`${s.runs} runs in ${Math.round(performance.now() - t0) / 1000} s; waiting for due exports`);
    await settleExports(paths.outDir, months, optional);
    s.daemon.child.kill('SIGTERM');
    await s.daemon.exited;
    s.failed += s.daemon.failed;
    opts.progress?.(`daemon stopped at ${Math.round(performance.now() - t0) / 1000} s; comparing with the truth`);
    const truth = await checkDatabase(paths.dbPath, sb.world);
    const exports = checkExports(paths.outDir, months, optional);
    const ratio = s.rss.first && s.rss.last ? Math.round((s.rss.last / s.rss.first) * 1000) / 1000 : null;
    const result: SoakResult = {
      runs: s.runs,
      kills: s.kills,
      seed: opts.seed,
      failed_runs: s.failed,
      clock_start: new Date(START).toISOString(),
      clock_end: new Date(s.clock).toISOString(),
      rss_run50_mb: s.rss.first,
      rss_run1000_mb: s.rss.last,
      rss_ratio: ratio,
      rss_runs: s.rss.first !== null ? [s.rss.firstAt, s.runs] : null,
      last_process_runs: s.daemon.counted,
      db_equals_truth: truth.equal,
      exports_once: exports.once,
      truth,
      exports,
      wall_s: Math.round((performance.now() - t0) / 100) / 10,
    };
    return { result, dbPath: paths.dbPath, outDir: paths.outDir, sandbox: sb, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** The RSS goal: after the last run within 10% of after the 50th (of the same process). */
export const RSS_TOLERANCE = 0.1;

export function soakPassed(r: SoakResult): boolean {
  const rssOk = r.rss_ratio === null || Math.abs(r.rss_ratio - 1) <= RSS_TOLERANCE;
  return r.db_equals_truth && r.exports_once && rssOk;
}

function table(r: SoakResult): string {
  const rows: [string, string][] = [
    ['runs / kills / seed', `${r.runs} / ${r.kills} / ${r.seed}`],
    ['failed runs', String(r.failed_runs)],
    ['clock', `${r.clock_start} -> ${r.clock_end}`],
    ['database = truth', `${r.db_equals_truth} (${r.truth.compared} values, ${r.truth.mismatches} mismatches)`],
    [
      'exports once',
      `${r.exports_once} (${r.exports.expectedMonths.length} months, ${r.exports.leftovers} hidden leftovers)`,
    ],
    [
      'last daemon RSS',
      r.rss_runs
        ? `${r.rss_run50_mb} MB at soak run ${r.rss_runs[0]} (its ${RSS_FIRST_RUN}th) -> ${r.rss_run1000_mb} MB at run ${r.rss_runs[1]}: x${r.rss_ratio}`
        : `n/a (the last process ran ${r.last_process_runs} runs, fewer than ${RSS_FIRST_RUN})`,
    ],
    ['wall', `${r.wall_s} s`],
  ];
  const problems = [...r.truth.examples, ...r.exports.problems].map((p) => `  ${p}`);
  return [...rows.map(([k, v]) => `${k.padEnd(20)} ${v}`), ...problems].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1000' },
      kills: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean', default: false },
      'daemon-log': { type: 'string' },
      'max-wall': { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const kills = values.kills !== undefined ? Number(values.kills) : Math.max(2, Math.round(runs / 50));
  process.stdout.write(`soak: ${runs} runs, ${kills} kills, seed ${seed}\n`);
  const s = await soak({
    runs,
    kills,
    seed,
    progress: (l) => process.stdout.write(l + '\n'),
    ...(values['daemon-log'] ? { daemonLog: values['daemon-log'] } : {}),
    ...(values['max-wall'] ? { maxWallS: Number(values['max-wall']) } : {}),
  });
  await s.cleanup();
  const r = s.result;
  process.stdout.write(table(r) + '\n');
  if (values.json) {
    const { truth: _t, exports: _e, ...flat } = r;
    process.stdout.write(JSON.stringify(flat) + '\n');
  }
  if (r.runs < runs) process.stdout.write(`stopped by --max-wall after ${r.runs} of ${runs} runs\n`);
  process.exitCode = soakPassed(r) && r.runs >= runs ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
