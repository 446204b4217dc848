// Every status the spec names for these endpoints, in the situation the spec gives; the rate limits
// over HTTP; injected faults; error bodies and request ids.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMPTION_PATHS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import { startSandbox, type Sandbox, type SandboxStats } from '../../src/sandbox/server.js';
import { call, DAY, HOUR, iso, url } from '../support/sandboxClient.js';

const NOW = Date.UTC(2025, 8, 20, 10, 37);
const OPEN = { perMinute: 1e6, perSecondPerRoute: 1e6 };
let sb: Sandbox;
let currentOrg: string;
let legacyOrg: string;
let outsiderOrg: string;
const daily = { granularity: 'daily', from: iso(NOW - 10 * DAY), to: iso(NOW) };

beforeAll(async () => {
  sb = await startSandbox({ seed: 2, now: NOW, advance: false, limits: OPEN });
  const member = (o: { id: string }): boolean => sb.world.personal_org_ids.includes(o.id);
  currentOrg = sb.world.orgs.find((o) => o.billing === 'current' && member(o))!.id;
  legacyOrg = sb.world.orgs.find((o) => o.billing === 'legacy' && member(o))!.id;
  outsiderOrg = sb.world.orgs.find((o) => !member(o))!.id;
});
afterAll(() => sb.close());

const v2 = (extra: Record<string, string | number | undefined> = {}): Record<string, string | number | undefined> => ({
  ...daily,
  org_id: currentOrg,
  metrics: 'compute_unit_seconds',
  ...extra,
});
const fw = (extra: Record<string, string | number | undefined> = {}): Record<string, string | number | undefined> => ({
  ...daily,
  program_ids: sb.world.programs.find((p) => p.org_id === currentOrg)!.id,
  metrics: 'compute_unit_seconds',
  ...extra,
});

async function expectError(
  status: number,
  path: string,
  params: Record<string, string | number | undefined>,
  key?: string | null,
): Promise<void> {
  const r = await call(sb, path, params, { key });
  expect(r.status, `${path} ${JSON.stringify(params)}: ${r.text}`).toBe(status);
  expect(typeof r.body.request_id).toBe('string');
  expect(typeof r.body.code).toBe('string');
  expect(typeof r.body.message).toBe('string');
  expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
}

describe('400: invalid parameters', () => {
  const P = CONSUMPTION_PATHS;
  it.each([
    ['v2 without org_id', P.v2_programs, () => v2({ org_id: undefined })],
    ['v2 without metrics', P.v2_programs, () => v2({ metrics: undefined })],
    ['v2 unknown metric', P.v2_programs, () => v2({ metrics: 'compute_unit_seconds,cpu_seconds' })],
    ['v2 limit 0', P.v2_programs, () => v2({ limit: 0 })],
    ['v2 limit 101', P.v2_programs, () => v2({ limit: 101 })],
    ['v2 limit not a number', P.v2_programs, () => v2({ limit: 'ten' })],
    [
      'v2 101 program ids',
      P.v2_programs,
      () => v2({ program_ids: Array.from({ length: 101 }, (_, i) => `p${i}`).join(',') }),
    ],
    ['missing granularity', P.v2_programs, () => v2({ granularity: undefined })],
    ['unknown granularity', P.v2_programs, () => v2({ granularity: 'weekly' })],
    ['missing from', P.v2_programs, () => v2({ from: undefined })],
    ['from not a date-time', P.v2_programs, () => v2({ from: 'yesterday' })],
    ['from equals to after rounding', P.v2_programs, () => v2({ from: iso(NOW - 5 * HOUR), to: iso(NOW - HOUR) })],
    ['from after to', P.v2_programs, () => v2({ from: iso(NOW - DAY), to: iso(NOW - 3 * DAY) })],
    ['frameworks without program_ids', P.v2_frameworks, () => fw({ program_ids: undefined })],
    [
      'frameworks extra_branches_month',
      P.v2_frameworks,
      () => fw({ metrics: 'compute_unit_seconds,extra_branches_month' }),
    ],
    ['frameworks snapshot_storage_bytes_month', P.v2_frameworks, () => fw({ metrics: 'snapshot_storage_bytes_month' })],
    ['frameworks limit 1001', P.v2_frameworks, () => fw({ limit: 1001 })],
    [
      'frameworks 101 branch ids',
      P.v2_frameworks,
      () => fw({ branch_ids: Array.from({ length: 101 }, (_, i) => `br-${i}`).join(',') }),
    ],
    ['v1 unknown metric', P.v1_programs, () => ({ ...daily, metrics: 'compute_unit_seconds' })],
    ['v1 include_v1_metrics not boolean', P.v1_programs, () => ({ ...daily, include_v1_metrics: 'maybe' })],
    ['unknown cursor', P.v2_programs, () => v2({ cursor: 'nope' })],
    ['programs limit 401', '/programs', () => ({ limit: 401 })],
  ] as [string, string, () => Record<string, string | number | undefined>][])('%s', async (_name, path, params) => {
    await expectError(400, path, params());
  });

  it('accepts list parameters repeated or comma-separated, and the bounds themselves', async () => {
    const ids = sb.world.programs
      .filter((p) => p.org_id === currentOrg)
      .slice(0, 2)
      .map((p) => p.id);
    const comma = await call(
      sb,
      CONSUMPTION_PATHS.v2_programs,
      v2({ program_ids: ids.join(','), metrics: 'compute_unit_seconds,root_branch_bytes_month' }),
    );
    const repeated = await call(sb, CONSUMPTION_PATHS.v2_programs, {
      ...v2({ metrics: undefined }),
      program_ids: ids,
      metrics: ['compute_unit_seconds', 'root_branch_bytes_month'],
    });
    expect(comma.status).toBe(200);
    expect(repeated.text).toBe(comma.text);
    expect(comma.body.programs).toHaveLength(2);
    for (const limit of [1, 100])
      expect((await call(sb, CONSUMPTION_PATHS.v2_programs, v2({ limit }))).status).toBe(200);
    expect((await call(sb, CONSUMPTION_PATHS.v2_frameworks, fw({ limit: 1000 }))).status).toBe(200);
    expect((await call(sb, '/programs', { limit: 400 })).status).toBe(200);
  });

  it('v1 metrics: the default set, include_v1_metrics adds data_storage_bytes_hour, metrics overrides it', async () => {
    const fields = async (extra: Record<string, string>): Promise<string[]> => {
      const r = await call(sb, CONSUMPTION_PATHS.v1_programs, { ...daily, org_id: legacyOrg, limit: 1, ...extra });
      return Object.keys(r.body.programs[0].periods[0].consumption[0])
        .filter((k) => !k.startsWith('timeframe'))
        .sort();
    };
    expect(await fields({})).toEqual([
      'active_time_seconds',
      'compute_time_seconds',
      'synthetic_storage_size_bytes',
      'written_data_bytes',
    ]);
    expect(await fields({ include_v1_metrics: 'true' })).toContain('data_storage_bytes_hour');
    expect(await fields({ include_v1_metrics: 'true', metrics: 'logical_size_bytes' })).toEqual(['logical_size_bytes']);
  });
});

describe('401, 403, 404, 406', () => {
  it('401: missing, malformed or unknown key', async () => {
    await expectError(401, '/programs', {}, null);
    await expectError(401, '/programs', {}, 'sbx_personal_0000000000000000');
    const r = await fetch(url(sb, '/programs'), { headers: { authorization: `Basic ${sb.apiKey}` } });
    expect(r.status).toBe(401);
  });

  it('403: a current-plan organisation on v1, a legacy one on v2', async () => {
    await expectError(403, CONSUMPTION_PATHS.v1_programs, { ...daily, org_id: currentOrg });
    await expectError(403, CONSUMPTION_PATHS.v2_programs, v2({ org_id: legacyOrg }));
    const legacyProgram = sb.world.programs.find((p) => p.org_id === legacyOrg)!.id;
    await expectError(403, CONSUMPTION_PATHS.v2_frameworks, fw({ program_ids: legacyProgram }));
    await expectError(403, CONSUMPTION_PATHS.v1_programs, {
      ...daily,
      program_ids: sb.world.programs.find((p) => p.org_id === currentOrg)!.id,
    });
    // Without org_id, v1 answers the legacy organisations the key reaches, and 403 when there are none.
    await expectError(403, CONSUMPTION_PATHS.v1_programs, daily, sb.keys.org[currentOrg]);
    expect((await call(sb, CONSUMPTION_PATHS.v1_programs, daily)).status).toBe(200);
  });

  it('404: outside the key reach or not a member of org_id, never 403', async () => {
    const outsider = sb.world.programs.find((p) => p.org_id === outsiderOrg)!.id;
    await expectError(404, CONSUMPTION_PATHS.v2_programs, v2({ org_id: outsiderOrg }));
    await expectError(404, CONSUMPTION_PATHS.v1_programs, { ...daily, org_id: outsiderOrg });
    await expectError(404, CONSUMPTION_PATHS.v2_frameworks, fw({ program_ids: outsider }));
    await expectError(404, `/programs/${outsider}`, {});
    await expectError(404, `/programs/${outsider}/frameworks`, {});
    await expectError(404, `/programs/${outsider}/snapshots`, {});
    await expectError(404, CONSUMPTION_PATHS.v2_programs, v2({ org_id: legacyOrg }), sb.keys.org[currentOrg]);
    await expectError(404, CONSUMPTION_PATHS.v2_programs, v2({ program_ids: 'no-such-program' }));
    const other = sb.world.programs.find((p) => p.org_id === currentOrg && p.id !== sb.keys.program.programId)!.id;
    await expectError(404, CONSUMPTION_PATHS.v2_frameworks, fw({ program_ids: other }), sb.keys.program.key);
    await expectError(404, '/no/such/route', {});
  });

  it('406: from earlier than the granularity window or 2024-03-01', async () => {
    const cases: [string, number, number][] = [
      ['hourly', NOW - 169 * HOUR, NOW],
      ['daily', NOW - 61 * DAY, NOW],
      ['monthly', Date.UTC(2024, 8, 1), NOW],
    ];
    for (const [granularity, from, to] of cases) {
      await expectError(406, CONSUMPTION_PATHS.v2_programs, v2({ granularity, from: iso(from), to: iso(to) }));
      await expectError(406, CONSUMPTION_PATHS.v1_programs, { granularity, from: iso(from), to: iso(to) });
      await expectError(406, CONSUMPTION_PATHS.v2_frameworks, fw({ granularity, from: iso(from), to: iso(to) }));
    }
    // The window's edge is accepted (from is rounded down first).
    expect(
      (
        await call(
          sb,
          CONSUMPTION_PATHS.v2_programs,
          v2({ granularity: 'hourly', from: iso(NOW - 167 * HOUR), to: iso(NOW) }),
        )
      ).status,
    ).toBe(200);
    const early = await startSandbox({ seed: 2, now: Date.UTC(2024, 4, 1), advance: false, limits: OPEN });
    try {
      const org = early.world.personal_org_ids.find((id) => early.world.orgById.get(id)?.billing === 'current')!;
      const r = await call(early, CONSUMPTION_PATHS.v2_programs, {
        granularity: 'monthly',
        from: iso(Date.UTC(2024, 1, 1)),
        to: iso(Date.UTC(2024, 4, 1)),
        org_id: org,
        metrics: 'compute_unit_seconds',
      });
      expect(r.status).toBe(406);
      const ok = await call(early, CONSUMPTION_PATHS.v2_programs, {
        granularity: 'monthly',
        from: iso(Date.UTC(2024, 2, 1)),
        to: iso(Date.UTC(2024, 4, 1)),
        org_id: org,
        metrics: 'compute_unit_seconds',
      });
      expect(ok.status).toBe(200);
    } finally {
      await early.close();
    }
  });

  it('X-Request-ID is echoed when sent and generated when not', async () => {
    const sent = await call(sb, '/programs', {}, { headers: { 'x-request-id': 'req-abc-123' } });
    expect(sent.headers.get('x-request-id')).toBe('req-abc-123');
    const failed = await call(sb, '/programs', {}, { key: null, headers: { 'x-request-id': 'req-401' } });
    expect(failed.body.request_id).toBe('req-401');
    const generated = await call(sb, '/programs');
    expect(generated.headers.get('x-request-id')).toMatch(/\S{8,}/);
  });
});

describe('limits and faults', () => {
  it('50 requests within one second on one route: 10 get 429 with Retry-After, counted as violations', async () => {
    const limited = await startSandbox({ seed: 2, now: NOW, advance: false });
    try {
      const results = await Promise.all(Array.from({ length: 50 }, () => call(limited, '/programs', { limit: 1 })));
      const refused = results.filter((r) => r.status === 429);
      expect(results.filter((r) => r.status === 200)).toHaveLength(40);
      expect(refused).toHaveLength(10);
      for (const r of refused) expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another route has its own per-second window.
      expect((await call(limited, '/auth')).status).toBe(200);
      const stats = (await (await fetch(limited.baseUrl.replace('/v1', '/__sandbox/stats'))).json()) as SandboxStats;
      expect(stats.violations).toEqual({ perMinute: 0, perSecond: 10, total: 10 });
      expect(stats.throttledByLimit).toBe(10);
      expect(stats.byRoute['/programs']).toBe(50);
      expect(stats.byStatus).toEqual({ '200': 41, '429': 10 });
      expect(stats.faults['429']).toBe(0);
      // Reading the stats is not itself counted.
      expect(
        ((await (await fetch(limited.baseUrl.replace('/v1', '/__sandbox/stats'))).json()) as SandboxStats).byStatus,
      ).toEqual(stats.byStatus);
      limited.resetStats();
      expect(limited.stats().total).toBe(0);
    } finally {
      await limited.close();
    }
  });

  it('the per-minute limit per key', async () => {
    const limited = await startSandbox({ seed: 2, now: NOW, advance: false, limits: { perMinute: 5 } });
    try {
      const routes = ['/programs', '/auth', '/users/me/organizations', '/programs', '/auth'];
      for (const r of routes) expect((await call(limited, r)).status).toBe(200);
      const refused = await call(limited, '/users/me/organizations');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
      // Another key has its own minute.
      expect(
        (await call(limited, '/auth', {}, { key: limited.keys.org[limited.world.personal_org_ids[0]!] })).status,
      ).toBe(200);
      expect(limited.stats().violations).toEqual({ perMinute: 1, perSecond: 0, total: 1 });
    } finally {
      await limited.close();
    }
  });

  it('injected 503, 423 and 429 (Retry-After: 1), counted as faults', async () => {
    for (const [kind, faults] of [
      ['503', { rate503: 1 }],
      ['423', { rate423: 1 }],
      ['429', { rate429: 1 }],
    ] as const) {
      const faulty = await startSandbox({ seed: 2, now: NOW, advance: false, faults, limits: OPEN });
      try {
        const r = await call(faulty, CONSUMPTION_PATHS.v2_programs, {
          ...daily,
          org_id: faulty.world.personal_org_ids[0],
          metrics: V2_PROGRAM_METRICS.join(','),
        });
        expect(r.status).toBe(Number(kind));
        expect(typeof r.body.code).toBe('string');
        if (kind === '429') expect(r.headers.get('retry-after')).toBe('1');
        const stats = faulty.stats();
        expect(stats.faults[kind]).toBe(1);
        expect(stats.violations.total).toBe(0);
        // Outside /v1 nothing is injected.
        expect((await fetch(faulty.baseUrl.replace('/v1', '/__sandbox/stats'))).status).toBe(200);
      } finally {
        await faulty.close();
      }
    }
  });

  it('a dropped connection is a network error for the client; latency is added', async () => {
    const dropping = await startSandbox({
      seed: 2,
      now: NOW,
      advance: false,
      faults: { rateDrop: 1 },
      latencyMs: 30,
      limits: OPEN,
    });
    try {
      const t0 = performance.now();
      await expect(
        fetch(url(dropping, '/programs'), { headers: { authorization: `Bearer ${dropping.apiKey}` } }),
      ).rejects.toThrow();
      expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
      expect(dropping.stats().faults).toMatchObject({ drop: 1, latency: 1 });
    } finally {
      await dropping.close();
    }
  });

  it('faults at a rate are the same sequence for the same seed', async () => {
    const statuses = async (seed: number): Promise<number[]> => {
      const s = await startSandbox({
        seed,
        now: NOW,
        advance: false,
        faults: { rate503: 0.2, rate423: 0.2, rate429: 0.2 },
        limits: OPEN,
      });
      try {
        const out: number[] = [];
        for (let i = 0; i < 30; i++) out.push((await call(s, '/auth')).status);
        return out;
      } finally {
        await s.close();
      }
    };
    const a = await statuses(9);
    expect(await statuses(9)).toEqual(a);
    expect(new Set(a)).toEqual(new Set([200, 503, 423, 429]));
  });
});
