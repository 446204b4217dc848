// A sandbox world's daily v2 usage, exactly as the API would answer it (the sandbox's truth), loaded
// into a fresh database through the collector's own page path (UsageBatch.appendPage), with the price
// tables and the world's spending limits: the ground the alerts backtest and measurement stand on.
import { join } from 'node:path';
import { loadPriceBook } from '../src/billing/pricebook.js';
import { packageRoot } from '../src/config/packageRoot.js';
import { refreshPrices } from '../src/report/prices.js';
import { expectedRows, type TruthRow } from '../src/sandbox/truth.js';
import type { World } from '../src/sandbox/world.js';
import type { Store } from '../src/store/store.js';

const DAY = 86_400_000;
const CHUNK = 400;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000', '');

/** Truth rows of some programs as v2 programs pages of at most 100 programs. */
function pages(world: World, rows: TruthRow[]): string[] {
  const byProgram = new Map<
    string,
    Map<string, Map<number, { end: number; metrics: { metric_name: string; value: string }[] }>>
  >();
  for (const r of rows) {
    const periods = byProgram.get(r.program_id) ?? byProgram.set(r.program_id, new Map()).get(r.program_id)!;
    const buckets = periods.get(r.period_id) ?? periods.set(r.period_id, new Map()).get(r.period_id)!;
    const b =
      buckets.get(r.timeframe_start) ??
      buckets.set(r.timeframe_start, { end: r.timeframe_end, metrics: [] }).get(r.timeframe_start)!;
    b.metrics.push({ metric_name: r.metric, value: r.value.toString() });
  }
  const programs = [...byProgram].map(([programId, periods]) => {
    const p = world.programById.get(programId)!;
    return {
      program_id: programId,
      periods: [...periods].map(([periodId, buckets]) => {
        const period = p.periods.find((x) => x.period_id === periodId)!;
        return {
          period_id: periodId,
          period_plan: period.plan,
          period_start: iso(period.start),
          period_end: period.end === undefined ? null : iso(period.end),
          consumption: [...buckets]
            .sort((a, b) => a[0] - b[0])
            .map(([start, b]) => ({ timeframe_start: iso(start), timeframe_end: iso(b.end), metrics: b.metrics })),
        };
      }),
    };
  });
  const out: string[] = [];
  // Values as JSON integers (the strings above keep int64 exact until here).
  for (let i = 0; i < programs.length; i += 100)
    out.push(
      JSON.stringify({ programs: programs.slice(i, i + 100), pagination: {} }).replace(
        /"value":"(\d+)"/g,
        '"value":$1',
      ),
    );
  return out;
}

/**
 * Loads `days` whole days of daily v2 usage ending at the UTC midnight before `now`, for every current
 * member organization (as run `runId`, written at `collectedAt`, default `now`), and the world's spending limits.
 * Returns the data's [from, to).
 */
export async function loadDailyWorld(
  store: Store,
  world: World,
  o: { now: number; days: number; runId?: string; collectedAt?: number },
): Promise<{ from: number; to: number }> {
  await refreshPrices(store, loadPriceBook(join(packageRoot(), 'config/prices.toml')), new Date(o.now));
  const to = Math.floor(o.now / DAY) * DAY;
  const from = to - o.days * DAY;
  for (const org of world.orgs) {
    if (org.billing !== 'current' || !world.personal_org_ids.includes(org.id)) continue;
    const ids = world.programs.filter((p) => p.org_id === org.id).map((p) => p.id);
    const batch = store.usage.beginBatch({
      table: 'usage_program',
      apiVersion: 'v2',
      granularity: 'daily',
      windowStart: new Date(from),
      windowEnd: new Date(to),
      scope: { orgId: org.id },
      coverage: { source: 'v2_programs', scope: org.id, status: 'complete' },
      runId: o.runId ?? 'bench-alerts',
      collectedAt: new Date(o.collectedAt ?? o.now),
    });
    for (let i = 0; i < ids.length; i += CHUNK) {
      const rows = expectedRows(world, {
        source: 'v2_programs',
        granularity: 'daily',
        from,
        to,
        now: o.now,
        orgId: org.id,
        programIds: ids.slice(i, i + CHUNK),
      });
      for (const page of pages(world, rows)) await batch.appendPage('v2_programs', page);
    }
    await batch.commit();
  }
  for (const [orgId, limit] of world.spendingLimits) {
    await store.alerts.recordSpendingLimit(
      orgId,
      'cents' in limit ? BigInt(limit.cents) : null,
      'cents' in limit ? 'limit' : `none (${limit.status})`,
      new Date(o.now),
    );
  }
  return { from, to };
}
