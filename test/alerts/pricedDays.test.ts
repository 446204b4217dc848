// The alert rules' priced days (alert_priced_days) on a real database: priced to the cent as the spend
// view of migration 004 prices the same buckets; a re-collected window is taken in by re-pricing only
// its days; new prices re-price everything.
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { loadPriceBook } from '../../src/billing/pricebook.js';
import { refreshPrices } from '../../src/report/prices.js';
import { decideAnomaly } from '../../src/alerts/rules.js';
import { daySlices, type AnomalyTotalsRow } from '../../src/store/alerts.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore, type Store } from '../../src/store/store.js';
import type { UsageRowIn } from '../support/rowLoader.js';
import { load, spec, tempDir } from '../support/store.js';

const DAY = 86_400_000;
const START = Date.UTC(2026, 9, 1); // 2026-10-01
const END = Date.UTC(2026, 9, 21);
const NOW = new Date('2026-10-21T12:00:00Z');

function rows(o: { bump: number; from?: number; to?: number }): UsageRowIn[] {
  const out: UsageRowIn[] = [];
  for (let t = o.from ?? START; t < (o.to ?? END); t += DAY) {
    const i = (t - START) / DAY;
    for (const program of ['p-a', 'p-b']) {
      const row = (metric: string, value: bigint): UsageRowIn => ({
        org_id: 'org-1',
        program_id: program,
        period_id: `pd-${program}`,
        period_plan: program === 'p-a' ? 'scale' : 'launch',
        period_start: new Date(START - 30 * DAY),
        period_end: null,
        timeframe_start: new Date(t),
        timeframe_end: new Date(t + DAY),
        metric,
        value,
      });
      out.push(row('compute_unit_seconds', BigInt(123_457 + i * 7_919 + o.bump)));
      out.push(row('root_branch_bytes_month', BigInt(3_000_000_001 + i * 1_000_003)));
      out.push(row('public_network_transfer_bytes', BigInt(5_000_000_017 * (i % 3))));
    }
  }
  return out;
}

// Each program, day and metric's spend by the view spend_program_buckets (migration 004), and by the priced days.
const BY_VIEW = `
SELECT program_id || '|' || CAST(usage_day AS VARCHAR) || '|' || metric || '=' || CAST(sum(value) AS VARCHAR) || '/' ||
  CAST(sum(spend_cents(value, rate_micro, divisor)) AS VARCHAR) AS k
FROM spend_program_buckets WHERE granularity = 'daily' AND rate_micro IS NOT NULL AND divisor IS NOT NULL
GROUP BY program_id, usage_day, metric ORDER BY k`;
const BY_TABLE = `
SELECT program_id || '|' || CAST(usage_day AS VARCHAR) || '|' || metric || '=' || CAST(sum(qty) AS VARCHAR) || '/' ||
  CAST(sum(cents) AS VARCHAR) AS k
FROM alert_priced_days GROUP BY program_id, usage_day, metric ORDER BY k`;

describe("the alert rules' priced days", () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  const keys = async (sql: string) => (await rawSql(store).query<{ k: string }>(sql)).map((r) => r.k);
  beforeEach(async () => {
    dir = tempDir('alerts-priced-');
    store = await openStore({ path: join(dir.dir, 'usage.duckdb') });
    await refreshPrices(store, loadPriceBook('config/prices.toml'), NOW);
    await load(
      store,
      spec({ granularity: 'daily', windowStart: new Date(START), windowEnd: new Date(END), runId: 'r1' }),
      rows({ bump: 0 }),
    );
  });
  afterEach(async () => {
    await store.close();
    dir.cleanup();
  });

  test('the first sync prices every stored day, to the cent as the spend view does; a second has nothing to do', async () => {
    expect(await store.alerts.syncPricedDays(NOW)).toEqual({ repriced: true, slices: 7 }); // 20 days by 3
    const view = await keys(BY_VIEW);
    expect(view.length).toBeGreaterThan(100);
    expect(await keys(BY_TABLE)).toEqual(view);
    expect(await store.alerts.syncPricedDays(NOW)).toEqual({ repriced: false, slices: 0 });
  });

  test('a re-collected window re-prices only its days, and leaves what a full re-pricing would', async () => {
    await store.alerts.syncPricedDays(NOW);
    const from = END - 3 * DAY;
    await load(
      store,
      spec({ granularity: 'daily', windowStart: new Date(from), windowEnd: new Date(END), runId: 'r2' }),
      rows({ bump: 1_000_000, from }),
    );
    const before = await keys(BY_TABLE);
    expect(await store.alerts.syncPricedDays(NOW)).toEqual({ repriced: false, slices: 1 });
    const after = await keys(BY_TABLE);
    expect(after).toEqual(await keys(BY_VIEW));
    // Only the window's days changed: 2 programs x 3 days of compute.
    const days = ['2026-10-18', '2026-10-19', '2026-10-20'];
    expect(after.filter((k) => !before.includes(k)).map((k) => k.split('=')[0])).toEqual(
      ['p-a', 'p-b'].flatMap((p) => days.map((d) => `${p}|${d}|compute_unit_seconds`)),
    );
    await rawSql(store).run('DELETE FROM alert_priced_state');
    expect((await store.alerts.syncPricedDays(NOW)).repriced).toBe(true);
    expect(await keys(BY_TABLE)).toEqual(after);
  });

  test("a run's windows are re-priced from that run's rows alone: other organizations, API versions and failed scopes keep theirs", async () => {
    const window = { windowStart: new Date(START), windowEnd: new Date(END) };
    const asOrg2 = rows({ bump: 7 }).map((r) => ({ ...r, org_id: 'org-2', program_id: `q-${r.program_id}` }));
    await load(
      store,
      spec({
        ...window,
        granularity: 'daily',
        scope: { orgId: 'org-2' },
        coverage: { source: 'v2_programs', scope: 'org-2', status: 'complete' },
        runId: 'r1-org2',
      }),
      asOrg2,
    );
    // The same programs and days read from the v1 endpoint too (their own lines).
    await load(
      store,
      spec({
        ...window,
        granularity: 'daily',
        apiVersion: 'v1',
        coverage: { source: 'v1_programs', scope: 'org-1', status: 'complete' },
        runId: 'r1-v1',
      }),
      rows({ bump: 11 }),
    );
    await store.alerts.syncPricedDays(NOW);
    const from = END - 3 * DAY;
    const later = new Date(NOW.getTime() + DAY);
    // A later run: org-1's v2 days replaced, and a failed scope over org-2's (which replaced nothing).
    await load(
      store,
      spec({
        granularity: 'daily',
        windowStart: new Date(from),
        windowEnd: new Date(END),
        runId: 'r2',
        collectedAt: later,
      }),
      rows({ bump: 1_000_000, from }),
    );
    await store.coverage.record({
      source: 'v2_programs',
      granularity: 'daily',
      scope: 'org-2',
      windowStart: new Date(from),
      windowEnd: new Date(END),
      status: 'failed',
      runId: 'r2',
      collectedAt: later,
      detail: 'HTTP 500',
    });
    const before = await keys(BY_TABLE);
    expect(await store.alerts.syncPricedDays(NOW)).toEqual({ repriced: false, slices: 1 });
    const after = await keys(BY_TABLE);
    expect(after).toEqual(await keys(BY_VIEW));
    // Only org-1's compute on the window's days changed (v2 and v1 summed per program, day and metric).
    const days = ['2026-10-18', '2026-10-19', '2026-10-20'];
    expect(after.filter((k) => !before.includes(k)).map((k) => k.split('=')[0])).toEqual(
      ['p-a', 'p-b'].flatMap((p) => days.map((d) => `${p}|${d}|compute_unit_seconds`)),
    );
    expect(after.filter((k) => k.startsWith('q-')).length).toBeGreaterThan(100);
  });

  test('new rates re-price every day', async () => {
    await store.alerts.syncPricedDays(NOW);
    const before = await keys(BY_TABLE);
    await rawSql(store).run(
      "UPDATE price_rates SET rate_micro = rate_micro * 3 + 1 WHERE metric = 'compute_unit_seconds'",
    );
    expect((await store.alerts.syncPricedDays(NOW)).repriced).toBe(true);
    const after = await keys(BY_TABLE);
    expect(after).not.toEqual(before);
    expect(after).toEqual(await keys(BY_VIEW));
  });

  test('a day priced at other rates than its baseline days is priced metric by metric, as is every day without a rate change', async () => {
    // A new compute rate for plan scale from 2026-10-12: p-a's days from then have baseline days at the old rate.
    const sql = rawSql(store);
    await sql.run(`INSERT INTO price_rates SELECT rate_id || '-2026-10-12', plan, metric, rate * 2, rate_micro * 2, TIMESTAMPTZ '2026-10-12 00:00:00+00', effective_to, unit, source, revision
      FROM price_rates WHERE plan = 'scale' AND metric = 'compute_unit_seconds' AND effective_to IS NULL`);
    await sql.run(`UPDATE price_rates SET effective_to = TIMESTAMPTZ '2026-10-12 00:00:00+00'
      WHERE plan = 'scale' AND metric = 'compute_unit_seconds' AND effective_to IS NULL AND rate_id NOT LIKE '%-2026-10-12'`);
    await store.alerts.syncPricedDays(NOW);
    const p = { evalFrom: '2026-10-05', evalTo: '2026-10-21', baselineDays: 28, minActualCents: 0n };
    const all = await store.alerts.anomalyTotals(p);
    expect(all.length).toBe(2 * 16);
    expect(all).toEqual(await store.alerts.anomalyTotalsByMetric(p, ['p-a', 'p-b']));
    // On 2026-10-15 p-a's baseline days before the change are worth more than their own spend.
    const own = await sql.query<{ cents: bigint }>(
      "SELECT cents FROM alert_program_days WHERE program_id = 'p-a' AND usage_day = DATE '2026-10-05'",
    );
    const row = all.find((r) => r.program_id === 'p-a' && r.day === '2026-10-15')!;
    expect(BigInt(row.baseline.find((b) => b.day === '2026-10-05')!.cents)).toBeGreaterThan(BigInt(own[0]!.cents));
  });

  test('the days left out for their excess are days no rule fires on', async () => {
    const spike = Date.UTC(2026, 9, 19);
    await load(
      store,
      spec({ granularity: 'daily', windowStart: new Date(spike), windowEnd: new Date(spike + DAY), runId: 'r3' }),
      rows({ bump: 900_000_000, from: spike, to: spike + DAY }),
    );
    await store.alerts.syncPricedDays(NOW);
    const rule = { minExcessCents: 1000n, minRatio: 1.5, minScore: 4, baselineDays: 14, minBaselineDays: 7 };
    const p = { evalFrom: '2026-10-15', evalTo: '2026-10-21', baselineDays: 14, minActualCents: 1000n };
    const fires = (rows: AnomalyTotalsRow[]) =>
      rows
        .filter((r) => {
          const days = new Map(r.baseline.map((b) => [b.day, BigInt(b.cents)]));
          const base = [];
          for (let t = Date.parse(`${r.day}T00:00:00Z`) - 14 * DAY; t < Date.parse(`${r.day}T00:00:00Z`); t += DAY)
            base.push(days.get(new Date(t).toISOString().slice(0, 10)) ?? 0n);
          return decideAnomaly(BigInt(r.actual), base, rule) !== null;
        })
        .map((r) => `${r.program_id}|${r.day}`);
    const whole = await store.alerts.anomalyTotals(p);
    const pruned = await store.alerts.anomalyTotals({ ...p, minBaselineDays: 7 });
    expect(pruned.length).toBeLessThan(whole.length);
    expect(fires(pruned)).toEqual(fires(whole));
    expect(fires(whole)).toContain('p-a|2026-10-19');
  });

  test('day ranges are merged and cut into slices', () => {
    expect(
      daySlices(
        [
          ['2026-10-05', '2026-10-08'],
          ['2026-10-01', '2026-10-03'],
          ['2026-10-03', '2026-10-04'],
          ['2026-10-07', '2026-10-20'],
        ],
        7,
      ),
    ).toEqual([
      ['2026-10-01', '2026-10-04'],
      ['2026-10-05', '2026-10-12'],
      ['2026-10-12', '2026-10-19'],
      ['2026-10-19', '2026-10-20'],
    ]);
    expect(daySlices([], 7)).toEqual([]);
  });
});
