// What the endpoints answer over HTTP equals the ground truth, row for row, at every granularity;
// granularities agree with each other; recent buckets settle as the clock moves; int64 values
// beyond 2^53 arrive exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMPTION_PATHS, V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import { type Granularity, type Source } from '../../src/domain/granularity.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { expectedRows } from '../../src/sandbox/truth.js';
import { allPages, byKey, DAY, HOUR, iso, rowsOf, url, type Row } from '../support/sandboxClient.js';

const NOW = Date.UTC(2025, 8, 20, 10, 37);
const WINDOWS: Record<Granularity, { from: number; to: number }> = {
  hourly: { from: Date.UTC(2025, 8, 13, 11), to: NOW + 6 * HOUR },
  daily: { from: Date.UTC(2025, 6, 23), to: NOW + 2 * DAY },
  monthly: { from: Date.UTC(2024, 9, 1), to: Date.UTC(2025, 11, 1) },
};
const OPEN = { perMinute: 1e6, perSecondPerRoute: 1e6 };
let sb: Sandbox;
let currentOrg: string;
let legacyOrg: string;

beforeAll(async () => {
  sb = await startSandbox({ seed: 11, now: NOW, advance: false, limits: OPEN });
  currentOrg = sb.world.orgs.find((o) => o.billing === 'current' && sb.world.personal_org_ids.includes(o.id))!.id;
  legacyOrg = sb.world.orgs.find((o) => o.billing === 'legacy')!.id;
});
afterAll(() => sb.close());

async function fetchRows(
  source: Source,
  g: Granularity,
  extra: Record<string, string | readonly string[]> = {},
): Promise<Row[]> {
  const w = WINDOWS[g];
  const base = { granularity: g, from: iso(w.from), to: iso(w.to), ...extra };
  if (source === 'v1_programs') {
    const { items } = await allPages(sb, CONSUMPTION_PATHS.v1_programs, 'programs', {
      ...base,
      metrics: V1_METRICS.join(','),
      limit: 3,
    });
    return rowsOf(items, true);
  }
  if (source === 'v2_programs') {
    const { items } = await allPages(sb, CONSUMPTION_PATHS.v2_programs, 'programs', {
      ...base,
      org_id: currentOrg,
      metrics: V2_PROGRAM_METRICS,
      limit: 4,
    });
    return rowsOf(items, false);
  }
  const programIds = sb.world.programs.filter((p) => p.org_id === currentOrg).map((p) => p.id);
  const { items } = await allPages(sb, CONSUMPTION_PATHS.v2_frameworks, 'frameworks', {
    ...base,
    program_ids: programIds.join(','),
    metrics: V2_FRAMEWORK_METRICS,
    limit: 7,
  });
  return rowsOf(items, false);
}

function truth(source: Source, g: Granularity, now = NOW): Row[] {
  const metrics =
    source === 'v1_programs' ? V1_METRICS : source === 'v2_programs' ? V2_PROGRAM_METRICS : V2_FRAMEWORK_METRICS;
  return expectedRows(sb.world, {
    source,
    granularity: g,
    ...WINDOWS[g],
    now,
    metrics,
    orgId: source === 'v1_programs' ? legacyOrg : currentOrg,
  });
}

function sums(rows: readonly Row[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const r of rows) out[r.metric] = (out[r.metric] ?? 0n) + r.value;
  return out;
}

/** Per program (and framework), metric and bucket start: the value summed over periods. */
function perBucket(rows: readonly Row[], g: Granularity, floor: (ms: number) => number): Map<string, bigint> {
  const m = new Map<string, bigint>();
  for (const r of rows) {
    if (g !== 'hourly' && r.metric.endsWith('size_bytes')) continue; // gauges are checked separately
    const k = `${r.program_id}|${r.framework_id ?? ''}|${r.metric}|${floor(r.timeframe_start)}`;
    m.set(k, (m.get(k) ?? 0n) + r.value);
  }
  return m;
}
const floorDay = (ms: number): number => Math.floor(ms / DAY) * DAY;
const floorMonth = (ms: number): number => Date.UTC(new Date(ms).getUTCFullYear(), new Date(ms).getUTCMonth(), 1);

describe('HTTP answers equal the ground truth', () => {
  const cache = new Map<string, Row[]>();
  const rowsFor = async (s: Source, g: Granularity): Promise<Row[]> => {
    const k = `${s}/${g}`;
    if (!cache.has(k)) cache.set(k, await fetchRows(s, g));
    return cache.get(k)!;
  };

  for (const source of ['v1_programs', 'v2_programs', 'v2_frameworks'] as const) {
    for (const g of ['hourly', 'daily', 'monthly'] as const) {
      it(`${source} ${g}: every row and every sum`, async () => {
        const got = await rowsFor(source, g);
        const want = truth(source, g);
        expect(got.length).toBeGreaterThan(0);
        expect(sums(got)).toEqual(sums(want));
        expect(byKey(got)).toEqual(byKey(want));
      });
    }
  }

  it('granularities agree: hours add up to days, days to months (a gauge takes the max)', async () => {
    for (const source of ['v1_programs', 'v2_programs', 'v2_frameworks'] as const) {
      const hourly = perBucket(await rowsFor(source, 'hourly'), 'daily', floorDay);
      const daily = perBucket(await rowsFor(source, 'daily'), 'daily', floorDay);
      let compared = 0;
      for (const [k, v] of hourly) {
        const day = Number(k.split('|')[3]);
        if (day < WINDOWS.hourly.from) continue;
        if (day === floorDay(WINDOWS.hourly.from)) continue; // first day only partly in the hourly window
        expect(daily.get(k) ?? 0n, k).toBe(v);
        compared++;
      }
      expect(compared).toBeGreaterThan(20);
      const dailyByMonth = perBucket(
        (await rowsFor(source, 'daily')).filter(
          (r) => r.timeframe_start >= Date.UTC(2025, 7, 1) && r.timeframe_start < Date.UTC(2025, 8, 1),
        ),
        'monthly',
        floorMonth,
      );
      const monthly = perBucket(await rowsFor(source, 'monthly'), 'monthly', floorMonth);
      for (const [k, v] of dailyByMonth) expect(monthly.get(k), k).toBe(v);
    }
    const dailyV1 = (await rowsFor('v1_programs', 'daily')).filter(
      (r) => r.metric === 'synthetic_storage_size_bytes' && floorMonth(r.timeframe_start) === Date.UTC(2025, 7, 1),
    );
    const monthlyV1 = (await rowsFor('v1_programs', 'monthly')).filter(
      (r) =>
        r.metric === 'synthetic_storage_size_bytes' &&
        r.timeframe_start <= Date.UTC(2025, 7, 1) &&
        r.timeframe_end > Date.UTC(2025, 7, 1),
    );
    for (const m of monthlyV1) {
      const days = dailyV1.filter((d) => d.program_id === m.program_id && d.period_id === m.period_id);
      if (days.length > 0) expect(m.value).toBe(days.reduce((a, d) => (d.value > a ? d.value : a), 0n));
    }
  });

  it('a program is its frameworks plus a remainder; framework data starts at the account ingest date', async () => {
    const programs = perBucket(await rowsFor('v2_programs', 'daily'), 'daily', floorDay);
    const fwRows = await rowsFor('v2_frameworks', 'daily');
    const fwSum = new Map<string, bigint>();
    for (const r of fwRows) {
      const k = `${r.program_id}||${r.metric}|${floorDay(r.timeframe_start)}`;
      fwSum.set(k, (fwSum.get(k) ?? 0n) + r.value);
    }
    let below = 0;
    for (const [k, v] of fwSum) {
      const p = programs.get(k) ?? 0n;
      expect(v <= p, k).toBe(true);
      if (v < p) below++;
    }
    expect(below).toBeGreaterThan(0);
    const monthlyFw = await rowsFor('v2_frameworks', 'monthly');
    expect(Math.min(...monthlyFw.map((r) => r.timeframe_start))).toBe(floorMonth(sb.world.framework_data_start));
    const monthlyPrograms = await rowsFor('v2_programs', 'monthly');
    expect(Math.min(...monthlyPrograms.map((r) => r.timeframe_start))).toBe(WINDOWS.monthly.from);
  });

  it('a bucket straddling a plan change appears in both periods, split at the change or whole', async () => {
    const rows = await rowsFor('v2_programs', 'daily');
    const change = (day: number, hour: number): number => Date.UTC(2025, 7, day, hour);
    const splitProgram = sb.world.programs.find(
      (p) => p.org_id === currentOrg && p.split_at_plan_change && p.periods.some((x) => x.start === change(15, 12)),
    )!;
    const wholeProgram = sb.world.programs.find(
      (p) => p.org_id === currentOrg && !p.split_at_plan_change && p.periods.some((x) => x.start === change(10, 6)),
    )!;
    const splitRows = rows.filter(
      (r) =>
        r.program_id === splitProgram.id &&
        r.metric === 'compute_unit_seconds' &&
        floorDay(r.timeframe_start) === change(15, 0),
    );
    expect(splitRows.map((r) => [r.timeframe_start, r.timeframe_end]).sort()).toEqual([
      [change(15, 0), change(15, 12)],
      [change(15, 12), change(16, 0)],
    ]);
    expect(new Set(splitRows.map((r) => r.period_id)).size).toBe(2);
    const wholeRows = rows.filter(
      (r) =>
        r.program_id === wholeProgram.id && r.metric === 'compute_unit_seconds' && r.timeframe_start === change(10, 0),
    );
    expect(wholeRows).toHaveLength(2);
    expect(wholeRows.every((r) => r.timeframe_end === change(11, 0))).toBe(true);
    expect(new Set(wholeRows.map((r) => r.period_plan))).toEqual(new Set(['launch', 'scale']));
  });

  it('no bucket starts at or after now; the one in progress is there with its partial value', async () => {
    for (const g of ['hourly', 'daily', 'monthly'] as const) {
      const rows = await rowsFor('v2_programs', g);
      expect(Math.max(...rows.map((r) => r.timeframe_start))).toBeLessThan(NOW);
    }
    const daily = await rowsFor('v2_programs', 'daily');
    expect(daily.some((r) => r.timeframe_start === floorDay(NOW))).toBe(true);
  });
});

describe('the clock', () => {
  it('settling hours change as the clock moves, and the truth follows', async () => {
    const clocked = await startSandbox({ seed: 11, now: NOW, advance: false, limits: OPEN });
    try {
      const org = clocked.world.personal_org_ids.find((id) => clocked.world.orgById.get(id)?.billing === 'current')!;
      const q = {
        granularity: 'hourly',
        from: iso(NOW - 6 * HOUR),
        to: iso(NOW + HOUR),
        org_id: org,
        metrics: 'compute_unit_seconds,root_branch_bytes_month',
        limit: 100,
      };
      const read = async (): Promise<Map<string, bigint>> =>
        byKey(rowsOf((await allPages(clocked, CONSUMPTION_PATHS.v2_programs, 'programs', q)).items, false));
      const want = (now: number): Map<string, bigint> =>
        byKey(
          expectedRows(clocked.world, {
            source: 'v2_programs',
            granularity: 'hourly',
            from: NOW - 6 * HOUR,
            to: NOW + HOUR,
            now,
            metrics: ['compute_unit_seconds', 'root_branch_bytes_month'],
            orgId: org,
          }),
        );
      const before = await read();
      expect(before).toEqual(want(NOW));
      clocked.setNow(NOW + 15 * 60_000);
      const after = await read();
      expect(after).toEqual(want(NOW + 15 * 60_000));
      const changed = [...after].filter(([k, v]) => before.get(k) !== v);
      expect(changed.length).toBeGreaterThan(0);
      // Only recent hours move; hours closed more than 3 hours ago are final.
      for (const [k] of changed) expect(Number(k.split('|')[3])).toBeGreaterThanOrEqual(NOW - 4 * HOUR);
      // The clock can also be set out of process.
      const res = await fetch(clocked.baseUrl.replace('/v1', '/__sandbox/clock'), {
        method: 'POST',
        body: JSON.stringify({ now: iso(NOW + 5 * HOUR) }),
      });
      expect(res.status).toBe(200);
      expect(clocked.now()).toBe(NOW + 5 * HOUR);
      expect(await read()).toEqual(want(NOW + 5 * HOUR));
    } finally {
      await clocked.close();
    }
  });
});

describe('scenario bigint', () => {
  it('values beyond 2^53 arrive exactly, as bare integer literals', async () => {
    const big = await startSandbox({ seed: 5, scenario: 'bigint', now: NOW, advance: false, limits: OPEN });
    try {
      const org = big.world.personal_org_ids.find((id) => big.world.orgById.get(id)?.billing === 'current')!;
      const from = Date.UTC(2025, 8, 14);
      const to = Date.UTC(2025, 8, 20);
      const values: bigint[] = [];
      const texts: string[] = [];
      let cursor: string | undefined;
      do {
        const res = await fetch(
          url(big, CONSUMPTION_PATHS.v2_programs, {
            granularity: 'hourly',
            from: iso(from),
            to: iso(to),
            org_id: org,
            metrics: 'root_branch_bytes_month',
            limit: 100,
            cursor,
          }),
          { headers: { authorization: `Bearer ${big.apiKey}` } },
        );
        const text = await res.text();
        texts.push(text);
        for (const m of text.matchAll(/"value":(\d+)/g)) values.push(BigInt(m[1]!));
        cursor = /"pagination":\{"cursor":"([^"]+)"\}/.exec(text)?.[1];
      } while (cursor);
      const beyond = values.filter((v) => v > 2n ** 53n);
      expect(beyond.length).toBeGreaterThan(0);
      expect(beyond.some((v) => BigInt(Number(v)) !== v)).toBe(true); // JSON.parse would round these
      expect(texts.join('')).not.toMatch(/"value":"/);
      const want = expectedRows(big.world, {
        source: 'v2_programs',
        granularity: 'hourly',
        from,
        to,
        now: NOW,
        metrics: ['root_branch_bytes_month'],
        orgId: org,
      }).map((r) => r.value);
      expect(values.filter((v) => v !== 0n).sort()).toEqual(want.sort());

      const monthly = await allPages(big, CONSUMPTION_PATHS.v2_programs, 'programs', {
        granularity: 'monthly',
        from: iso(Date.UTC(2025, 0, 1)),
        to: iso(Date.UTC(2025, 8, 1)),
        org_id: org,
        metrics: V2_PROGRAM_METRICS,
        limit: 100,
      });
      const rows = rowsOf(monthly.items, false);
      expect(byKey(rows)).toEqual(
        byKey(
          expectedRows(big.world, {
            source: 'v2_programs',
            granularity: 'monthly',
            from: Date.UTC(2025, 0, 1),
            to: Date.UTC(2025, 8, 1),
            now: NOW,
            orgId: org,
          }),
        ),
      );
      expect(rows.every((r) => r.value < 2n ** 63n - 1n)).toBe(true);
      expect(rows.some((r) => r.value > 2n ** 60n)).toBe(true);
    } finally {
      await big.close();
    }
  });
});
