// Run by bench/alerts-backtest.ts in a fresh process: opens a loaded database as a collection does
// (collect.memory_limit, one thread) and measures alert evaluation. Mode `first`: the first evaluation
// (at alerts.memory_limit) after a collection on a database whose history was never priced for the rules (once, after an
// upgrade). Mode `daily` (the history priced): (1) a daily collection's store work, re-collecting the
// last 3 days of every organization through the collector's page path, and then what evaluating the
// alerts adds to that collection (changedScope of its window: the last days and the current month's
// budgets), at alerts.memory_limit, as `collect` runs it; (2) `alerts` on the whole current
// month, at store.memory_limit as the command runs it. Prints one JSON line: seconds, CPU seconds (user +
// system, process.cpuUsage: the machine may be shared, so wall time alone can mislead), the RSS above the
// RSS before evaluating, and what the evaluation's peak RSS adds to the collection's (sampled every 5 ms).
// Usage: node dist/bench/alerts-measure.js <db> <now-ms> first|daily
import { changedScope } from '../src/app/alerts.js';
import { alertSettings, evaluateAlerts, type EvaluationScope } from '../src/alerts/evaluate.js';
import { configSchema } from '../src/config/schema.js';
import { generateWorld } from '../src/sandbox/world.js';
import { openStore } from '../src/store/store.js';
import { loadDailyWorld } from './alertsWorld.js';

const DAY = 86_400_000;
const [dbPath, nowArg, mode] = process.argv.slice(2);
const now = Number(nowArg);
const config = configSchema.parse({});
const store = await openStore({ path: dbPath!, threads: 1, memoryLimit: config.collect.memory_limit });
const settings = alertSettings(config);

interface Figures {
  s: number;
  cpu_s: number;
  rss_added_mb: number;
  peak_rss_mb: number;
}

/** Runs `work`, sampling the process's RSS: seconds, CPU seconds, RSS added over the start, peak RSS. */
async function sampled<T>(work: () => Promise<T>): Promise<Figures & { result: T }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  try {
    const result = await work();
    const cpu = process.cpuUsage(cpu0);
    peak = Math.max(peak, process.memoryUsage.rss());
    return {
      s: +((performance.now() - t0) / 1000).toFixed(2),
      cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(2),
      rss_added_mb: Math.round((peak - before) / 2 ** 20),
      peak_rss_mb: Math.round(peak / 2 ** 20),
      result,
    };
  } finally {
    clearInterval(timer);
  }
}

async function evaluation(scope: EvaluationScope, memoryLimit?: string) {
  try {
    const { result, ...f } = await sampled(() => evaluateAlerts(store, settings, scope, new Date(now), memoryLimit));
    return { ...f, fired: result.fired.length };
  } catch (err) {
    // A failure is a figure too (say, DuckDB out of memory): reported, not thrown.
    return { error: (err as Error).message.split('\n')[0] ?? 'failed' };
  }
}

const today = Math.floor(now / DAY) * DAY;
const iso = (ms: number) => new Date(ms).toISOString();
// A daily collection re-reads the settle window: its scopes span the last three days.
const collection = changedScope(
  {
    scopes: [
      {
        source: 'v2_programs',
        granularity: 'daily',
        scope: 'org',
        from: iso(today - 3 * DAY),
        to: iso(today),
        status: 'complete',
        rows: 1,
      },
    ],
  },
  now,
)!;
if (mode === 'first') {
  const first = await evaluation(collection, config.alerts.memory_limit);
  await store.close();
  process.stdout.write(JSON.stringify({ first_evaluation: first }) + '\n');
} else {
  const world = generateWorld({ seed: 1, scenario: 'large', now, events: true });
  // A run of its own, written after the history (at the wall clock), as a later run's rows are.
  const { result: _, ...collect } = await sampled(() =>
    loadDailyWorld(store, world, { now, days: 3, runId: `bench-alerts-daily-${Date.now()}`, collectedAt: Date.now() }),
  );
  const after = await evaluation(collection, config.alerts.memory_limit);
  const addedToPeak = 'peak_rss_mb' in after ? Math.max(0, after.peak_rss_mb - collect.peak_rss_mb) : null;
  const month = `${iso(now).slice(0, 7)}-01`;
  const wholeMonth = await evaluation(
    { days: { from: month, to: iso(today).slice(0, 10) }, months: [month] },
    config.store.memory_limit,
  );
  await store.close();
  process.stdout.write(
    JSON.stringify({
      daily_collection: collect,
      after_daily_collect: { ...after, peak_rss_added_mb: addedToPeak },
      alerts_command_month: wholeMonth,
    }) + '\n',
  );
}
