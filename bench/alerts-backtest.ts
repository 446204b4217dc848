// `npm run bench:alerts`: the anomaly rule scored against the sandbox's labelled world, and a quiet
// world that must raise nothing; then the cost of evaluating alerts on the `large` account.
// Backtest: the `medium` scenario's daily v2 usage over 140 days (the sandbox's truth, loaded through the
// collector's page path), every settled day of the last 110 evaluated with the default rule; an alert is
// right when its program and day carry a label (a spike, or the first day of a program that starts
// spending). Recall is over the spikes of at least 3x whose excess over the program's baseline is at
// least USD 10 (measured on the stored data). The drifting programs must raise nothing.
// Measurement (--large, or --large-only): the `large` account (9,000 current programs with daily data,
// 90 days) loaded likewise; in a fresh process the first evaluation, which prices the history for the
// rules (once, after an upgrade); then, in a fresh process, a daily collection's store work (the last
// 3 days loaded again by another run, as a daily collection re-collects its settle window) and what
// evaluating the alerts adds to it (its last days and the current month's budgets), and what `alerts`
// on a whole month costs: seconds, CPU seconds and RSS (bench/alerts-measure.ts).
// Run after `npm run build`: node dist/bench/alerts-backtest.js [--large | --large-only] [--json]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alertSettings, evaluateAlerts } from '../src/alerts/evaluate.js';
import { medianCents } from '../src/alerts/rules.js';
import { configSchema } from '../src/config/schema.js';
import { labelledEvents } from '../src/sandbox/truth.js';
import { generateWorld, type Scenario } from '../src/sandbox/world.js';
import { openStore } from '../src/store/store.js';
import { loadDailyWorld } from './alertsWorld.js';

const DAY = 86_400_000;
/** The clock every world is generated at and evaluated by (fixed, so the figures repeat). */
export const NOW = Date.UTC(2026, 10, 20, 12);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Backtest {
  days_evaluated: number;
  programs: number;
  labels: { spikes: number; qualifying_spikes: number; starts: number; drifts: number };
  alerts: number;
  true_positives: number;
  precision: number;
  recall_qualifying_spikes: number;
  starts_found: number;
  drift_alerts: number;
  quiet_world_alerts: number;
}

async function alertsOn(
  scenario: Scenario,
  events: boolean,
): Promise<{
  keys: string[];
  labels: ReturnType<typeof labelledEvents>;
  excess: Map<string, bigint>;
  days: number;
  programs: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), 'alerts-backtest-'));
  try {
    const world = generateWorld({ seed: 1, scenario, now: NOW, events });
    const store = await openStore({ path: join(dir, 'usage.duckdb') });
    try {
      const { to } = await loadDailyWorld(store, world, { now: NOW, days: 140 });
      const settings = alertSettings(configSchema.parse({}));
      const from = day(to - 110 * DAY);
      const r = await evaluateAlerts(store, settings, { days: { from, to: day(to) }, months: [] }, new Date(NOW));
      const keys = r.fired
        .filter((a) => a.kind === 'anomaly' || a.kind === 'new_spend')
        .map((a) => `${a.program_id}|${a.day}`);
      // Each spike's excess over its program's baseline, from the stored data, to tell which qualify.
      const labels = labelledEvents(world);
      const excess = new Map<string, bigint>();
      const rows = [];
      for (const d of new Set(labels.spikes.map((x) => x.day))) {
        rows.push(
          ...(await store.alerts.anomalyTotals({
            evalFrom: d,
            evalTo: day(Date.parse(`${d}T00:00:00Z`) + DAY),
            baselineDays: settings.anomaly.baselineDays,
            minActualCents: 0n,
          })),
        );
      }
      const spikeKeys = new Set(labels.spikes.map((s) => `${s.program_id}|${s.day}`));
      for (const row of rows) {
        const k = `${row.program_id}|${row.day}`;
        if (!spikeKeys.has(k)) continue;
        const present = new Map(row.baseline.map((b) => [b.day, BigInt(b.cents)]));
        const base: bigint[] = [];
        for (
          let t = Date.parse(`${row.day}T00:00:00Z`) - settings.anomaly.baselineDays * DAY;
          t < Date.parse(`${row.day}T00:00:00Z`);
          t += DAY
        )
          base.push(present.get(day(t)) ?? 0n);
        excess.set(k, BigInt(row.actual) - medianCents(base));
      }
      const evaluated = Math.round((to - 2 * DAY - Date.parse(`${from}T00:00:00Z`)) / DAY);
      return { keys, labels, excess, days: evaluated, programs: world.programs.length };
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function backtest(): Promise<Backtest> {
  const labelled = await alertsOn('medium', true);
  const quiet = await alertsOn('medium', false);
  const { labels } = labelled;
  const truth = new Set([
    ...labels.spikes.map((s) => `${s.program_id}|${s.day}`),
    ...labels.starts.map((s) => `${s.program_id}|${s.day}`),
  ]);
  const tp = labelled.keys.filter((k) => truth.has(k)).length;
  const qualifying = labels.spikes.filter(
    (s) => s.factor >= 3 && (labelled.excess.get(`${s.program_id}|${s.day}`) ?? 0n) >= 1000n,
  );
  const found = new Set(labelled.keys);
  const drifting = new Set(labels.drifts.map((d) => d.program_id));
  return {
    days_evaluated: labelled.days,
    programs: labelled.programs,
    labels: {
      spikes: labels.spikes.length,
      qualifying_spikes: qualifying.length,
      starts: labels.starts.length,
      drifts: labels.drifts.length,
    },
    alerts: labelled.keys.length,
    true_positives: tp,
    precision: labelled.keys.length === 0 ? 1 : +(tp / labelled.keys.length).toFixed(3),
    recall_qualifying_spikes:
      qualifying.length === 0
        ? 1
        : +(qualifying.filter((s) => found.has(`${s.program_id}|${s.day}`)).length / qualifying.length).toFixed(3),
    starts_found: labels.starts.filter((s) => found.has(`${s.program_id}|${s.day}`)).length,
    drift_alerts: labelled.keys.filter((k) => drifting.has(k.split('|')[0]!)).length,
    quiet_world_alerts: quiet.keys.length,
  };
}

/** Loads the `large` account's 90 days, then measures evaluation in a fresh process (bench/alerts-measure.ts). */
async function measureLarge(keep?: string): Promise<Record<string, unknown>> {
  const dir = keep ?? mkdtempSync(join(tmpdir(), 'alerts-large-'));
  mkdirSync(dir, { recursive: true });
  try {
    const dbPath = join(dir, 'usage.duckdb');
    const world = generateWorld({ seed: 1, scenario: 'large', now: NOW, events: true });
    const t0 = performance.now();
    // --keep DIR: a database loaded before is measured again as it is.
    if (!existsSync(dbPath)) {
      const store = await openStore({ path: dbPath });
      await loadDailyWorld(store, world, { now: NOW, days: 90 });
      await store.checkpoint();
      await store.close();
    }
    const loadS = (performance.now() - t0) / 1000;
    const script = fileURLToPath(new URL('./alerts-measure.js', import.meta.url));
    const measure = (mode: 'first' | 'daily') => {
      const child = spawnSync(process.execPath, [script, dbPath, String(NOW), mode], { encoding: 'utf8' });
      if (child.status !== 0) throw new Error(`alerts-measure failed: ${child.stderr}`);
      return JSON.parse(child.stdout.trim().split('\n').at(-1)!) as object;
    };
    const first = measure('first');
    return {
      programs_with_daily_data: world.programs.filter(
        (p) => world.orgById.get(p.org_id)?.billing === 'current' && world.personal_org_ids.includes(p.org_id),
      ).length,
      days: 90,
      load_s: +loadS.toFixed(1),
      ...first,
      ...measure('daily'),
    };
  } finally {
    if (keep === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const out: Record<string, unknown> = {};
  if (!args.includes('--large-only')) out.backtest = await backtest();
  if (args.includes('--large') || args.includes('--large-only'))
    out.large = await measureLarge(args.includes('--keep') ? args[args.indexOf('--keep') + 1] : undefined);
  if (args.includes('--json')) process.stdout.write(JSON.stringify(out) + '\n');
  else process.stdout.write(JSON.stringify(out, null, 2) + '\n');
}
