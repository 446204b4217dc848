// Alerts evaluated on a real database: an anomaly with its contributions, new spend, budgets from the
// config and from an organization's spending limit; each fires once across re-runs and restarts, and a
// restated day supersedes its alert.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { alertSettings, evaluateAlerts } from '../../src/alerts/evaluate.js';
import { loadPriceBook } from '../../src/billing/pricebook.js';
import { configSchema } from '../../src/config/schema.js';
import { refreshPrices } from '../../src/report/prices.js';
import { runReport } from '../../src/report/run.js';
import { openStore, type Store } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';
import type { UsageRowIn } from '../support/rowLoader.js';
import { load, spec, tempDir } from '../support/store.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 8, 1); // 2026-09-01
const END = Date.UTC(2026, 10, 20); // 2026-11-20, the data's end
const NOW = new Date('2026-11-20T12:00:00Z');
const SPIKE = Date.UTC(2026, 10, 10);
const NEW_FROM = Date.UTC(2026, 10, 5);
const CU_PER_USD = 3600 / 0.222; // compute_unit_seconds per USD on 'scale'

function rows(o: { spike: boolean }): UsageRowIn[] {
  const out: UsageRowIn[] = [];
  const row = (program: string, t: number, metric: string, value: bigint): UsageRowIn => ({
    org_id: 'org-1',
    program_id: program,
    period_id: `pd-${program}`,
    period_plan: 'scale',
    period_start: new Date(START - 30 * DAY),
    period_end: null,
    timeframe_start: new Date(t),
    timeframe_end: new Date(t + DAY),
    metric,
    value,
  });
  for (let t = START, i = 0; t < END; t += DAY, i++) {
    const usd = 20 * (1 + (i % 5) * 0.03) * (o.spike && t === SPIKE ? 3 : 1);
    out.push(row('p-steady', t, 'compute_unit_seconds', BigInt(Math.round(usd * CU_PER_USD))));
    out.push(row('p-steady', t, 'root_branch_bytes_month', 3_000_000_000n)); // USD 1.05 a day
    if (o.spike && t === SPIKE) out.push(row('p-steady', t, 'public_network_transfer_bytes', 120_000_000_000n)); // USD 12
    if (t >= NEW_FROM) out.push(row('p-new', t, 'compute_unit_seconds', BigInt(Math.round(15 * CU_PER_USD))));
  }
  return out;
}

const settings = alertSettings(
  configSchema.parse({ budgets: [{ name: 'team', programs: ['p-steady'], amount_usd: '500' }] }),
);
const SCOPE = { days: { from: '2026-10-01', to: '2026-11-20' }, months: ['2026-11-01'] };

describe('alerts on a real database', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  const open = async () => (store = await openStore({ path: join(dir.dir, 'usage.duckdb') }));
  const loadAll = async (spike: boolean) =>
    load(
      store,
      spec({
        granularity: 'daily',
        windowStart: new Date(START),
        windowEnd: new Date(END),
        runId: spike ? 'r1' : 'r2',
      }),
      rows({ spike }),
    );
  beforeEach(async () => {
    dir = tempDir('alerts-');
    await open();
    await refreshPrices(store, loadPriceBook('config/prices.toml'), NOW);
    await loadAll(true);
  });
  afterEach(async () => {
    await store.close();
    dir.cleanup();
  });

  test('an anomaly names its day, numbers and contributions, which add up to the impact to the cent', async () => {
    const { fired } = await evaluateAlerts(store, settings, SCOPE, NOW);
    const anomalies = fired.filter((a) => a.kind === 'anomaly');
    expect(anomalies.map((a) => [a.program_id, a.day])).toEqual([['p-steady', '2026-11-10']]);
    const a = anomalies[0]!;
    expect(a.rule).toBe('anomaly-mad');
    const cents = (s: string | null) => Math.round(Number(s) * 100);
    expect(cents(a.actual_usd) - cents(a.expected_usd)).toBe(cents(a.impact_usd));
    const parts = [
      a.compute_usd,
      a.storage_usd,
      a.instant_restore_usd,
      a.snapshots_usd,
      a.transfer_usd,
      a.extra_branches_usd,
      a.other_usd,
    ];
    expect(parts.reduce((s, p) => s + cents(p), 0)).toBe(cents(a.impact_usd));
    expect(cents(a.transfer_usd)).toBe(1200);
    expect(cents(a.compute_usd)).toBeGreaterThan(3000);
    expect(a.score).toBeGreaterThanOrEqual(4);
    // The program that starts spending: one new-spend alert, on its first day.
    expect(fired.filter((x) => x.kind === 'new_spend').map((x) => [x.program_id, x.day])).toEqual([
      ['p-new', '2026-11-05'],
    ]);
  });

  test('read in chunks of programs, the rule gets the same inputs', async () => {
    const p = { evalFrom: '2026-10-01', evalTo: '2026-11-18', baselineDays: 28, minActualCents: 1000n };
    await store.alerts.syncPricedDays(NOW);
    const whole = await store.alerts.anomalyTotals(p);
    const parts = [];
    for (let chunk = 0; chunk < 3; chunk++)
      parts.push(...(await store.alerts.anomalyTotals({ ...p, chunks: 3, chunk })));
    const key = (r: { program_id: string; day: string }) => `${r.program_id}|${r.day}`;
    expect(whole.length).toBeGreaterThan(40);
    expect(parts.sort((x, y) => (key(x) < key(y) ? -1 : 1))).toEqual(whole);
    const one = await evaluateAlerts(store, { ...settings, chunkPrograms: 1 }, { days: SCOPE.days, months: [] }, NOW);
    expect(one.fired.map((a) => a.identity).sort()).toEqual([
      'anomaly|program|p-steady|2026-11-01|2026-11-10',
      'new_spend|program|p-new|2026-11-01|2026-11-05',
    ]);
  });

  test("at a memory limit below what DuckDB holds pinned, the rules run at the store's own limit instead", async () => {
    // An index DuckDB keeps in memory (about 11 MB), so that it refuses to go down to 4 MB.
    await rawSql(store).run(
      "CREATE TEMP TABLE pinned AS SELECT 'key-' || i AS k FROM range(300000) r(i); CREATE UNIQUE INDEX pinned_k ON pinned (k)",
    );
    const own = store.memoryLimit;
    const { fired } = await evaluateAlerts(store, settings, SCOPE, NOW, '4MB');
    expect(fired.filter((a) => a.kind === 'anomaly').map((a) => [a.program_id, a.day])).toEqual([
      ['p-steady', '2026-11-10'],
    ]);
    expect(store.memoryLimit).toBe(own);
  });

  test('thresholds and anomalies fire once across re-runs and restarts; a restated day is superseded', async () => {
    const first = await evaluateAlerts(store, settings, SCOPE, NOW);
    const budget = first.fired.filter((a) => a.scope_kind === 'program' && a.kind.startsWith('budget'));
    expect(budget.map((a) => [a.kind, a.threshold_pct])).toEqual([
      ['budget_actual', 50],
      ['budget_actual', 80],
      ['budget_forecast', 100],
    ]);
    expect(budget[2]!.crossing_date).toMatch(/^2026-11-2\d$/);
    expect((await evaluateAlerts(store, settings, SCOPE, NOW)).fired).toEqual([]);
    await store.close();
    await open();
    expect((await evaluateAlerts(store, settings, SCOPE, new Date(NOW.getTime() + 3_600_000))).fired).toEqual([]);
    const stored = await store.alerts.listAlerts('2026-11-01');
    expect(stored.length).toBe(first.fired.length);

    await loadAll(false);
    const restated = await evaluateAlerts(store, settings, SCOPE, NOW);
    expect(restated.fired).toEqual([]);
    const after = await store.alerts.listAlerts('2026-11-01');
    expect(after.find((a) => a.kind === 'anomaly')?.status).toBe('superseded');
    expect(after.filter((a) => a.status === 'open').length).toBe(first.fired.length - 1);
  });

  test("an organization's spending limit is its budget; none recorded means no organization budget", async () => {
    const s = alertSettings(configSchema.parse({}));
    expect((await evaluateAlerts(store, s, { months: ['2026-11-01'] }, NOW)).fired).toEqual([]);
    await store.alerts.recordSpendingLimit('org-1', 100_000n, 'limit', NOW); // USD 1,000
    const fired = (await evaluateAlerts(store, s, { months: ['2026-11-01'] }, NOW)).fired;
    expect(fired.map((a) => [a.kind, a.scope_kind, a.scope_id, a.threshold_pct, a.budget_usd])).toEqual([
      ['budget_actual', 'organization', 'org-1', 50, '1000.00'],
      ['budget_forecast', 'organization', 'org-1', 80, '1000.00'],
      ['budget_forecast', 'organization', 'org-1', 100, '1000.00'],
    ]);
  });

  test("the month's workbook has an Alerts sheet, the HTML page a section, and the manifest lists them", async () => {
    const { fired } = await evaluateAlerts(store, settings, SCOPE, NOW);
    const r = await runReport({
      store,
      month: '2026-11',
      outDir: join(dir.dir, 'reports'),
      formats: ['xlsx', 'html'],
      priceBookPath: 'config/prices.toml',
      now: NOW,
    });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, 'usage-2026-11.xlsx'));
    const ws = wb.getWorksheet('Alerts')!;
    expect(ws).toBeDefined();
    const header = (ws.getRow(3).values as unknown[]).slice(1);
    const ids = [];
    for (let i = 4; i <= ws.rowCount; i++) ids.push(ws.getRow(i).getCell(1).value);
    expect(ids.sort()).toEqual(fired.map((a) => a.alert_id).sort());
    const anomalyRow = [...Array(ws.rowCount - 3).keys()]
      .map((i) => ws.getRow(i + 4))
      .find((row) => row.getCell(3).value === 'anomaly')!;
    const cell = (name: string) => Number(anomalyRow.getCell(header.indexOf(name) + 1).value);
    const parts = header.filter((h) => String(h).startsWith('Impact: ')).map((h) => Math.round(cell(String(h)) * 100));
    expect(parts.reduce((a, b) => a + b, 0)).toBe(Math.round(cell('Impact') * 100));
    const html = readFileSync(join(r.dir, 'report.html'), 'utf8');
    expect(html).toContain('<section id="alerts">');
    expect(html).toContain('2026-11-10');
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8')) as {
      alerts: { alert_id: string }[];
    };
    expect(manifest.alerts.map((a) => a.alert_id).sort()).toEqual(fired.map((a) => a.alert_id).sort());
  });
});
