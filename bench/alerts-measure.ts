// Run by bench/alerts-backtest.ts in a fresh process: opens a loaded database as a collection does and
// measures alert evaluation. Mode `first`: the first evaluation after a collection on a database whose
// history was never priced for the rules (once, after an upgrade). Mode `daily` (the history priced,
// a collection having just re-collected the last days): (1) what that daily collection adds
// (changedScope of its window: the last days and the current month's budgets) and (2) `alerts` on the
// whole current month. Prints one JSON
// line: seconds, CPU seconds (user + system, process.cpuUsage: the machine may be shared, so wall time
// alone can mislead) and RSS above the RSS before evaluating (sampled every 10 ms).
// Usage: node dist/bench/alerts-measure.js <db> <now-ms> first|daily
import { changedScope } from '../src/app/alerts.js';
import { alertSettings, evaluateAlerts, type EvaluationScope } from '../src/alerts/evaluate.js';
import { configSchema } from '../src/config/schema.js';
import { openStore } from '../src/store/store.js';

const DAY = 86_400_000;
const [dbPath, nowArg, mode] = process.argv.slice(2);
const now = Number(nowArg);
const config = configSchema.parse({});
// As a collection opens it: collect.memory_limit, one thread (app/collect.ts); alerts run at store.memory_limit.
const store = await openStore({ path: dbPath!, threads: 1, memoryLimit: config.collect.memory_limit });
const settings = alertSettings(config);

interface Figures {
  s: number;
  cpu_s: number;
  rss_added_mb: number;
  fired: number;
}

async function measure(scope: EvaluationScope): Promise<Figures | { error: string; s: number }> {
  const t0 = performance.now();
  try {
    return await measured(scope);
  } catch (err) {
    // A failure is a figure too (say, DuckDB out of memory): reported, not thrown.
    return {
      error: (err as Error).message.split('\n')[0] ?? 'failed',
      s: +((performance.now() - t0) / 1000).toFixed(2),
    };
  }
}

async function measured(scope: EvaluationScope): Promise<Figures> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const r = await evaluateAlerts(store, settings, scope, new Date(now), config.store.memory_limit);
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  return {
    s: +s.toFixed(2),
    cpu_s: +((cpu.user + cpu.system) / 1e6).toFixed(2),
    rss_added_mb: Math.round((peak - before) / 2 ** 20),
    fired: r.fired.length,
  };
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
  const first = await measure(collection);
  await store.close();
  process.stdout.write(JSON.stringify({ first_evaluation: first }) + '\n');
} else {
  const afterCollect = await measure(collection);
  const month = `${iso(now).slice(0, 7)}-01`;
  const wholeMonth = await measure({ days: { from: month, to: iso(today).slice(0, 10) }, months: [month] });
  await store.close();
  process.stdout.write(JSON.stringify({ after_daily_collect: afterCollect, alerts_command_month: wholeMonth }) + '\n');
}
