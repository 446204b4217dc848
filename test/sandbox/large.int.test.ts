// The large scenario over HTTP: it starts with every program and framework reachable and serves a
// 1,000-framework daily page of 30 days equal to the truth. How fast is the benchmark's to measure
// (`npm run bench`), not a test's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSUMPTION_PATHS, V2_FRAMEWORK_METRICS } from '../../src/contract/api.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { expectedRows } from '../../src/sandbox/truth.js';
import { DAY, iso, url } from '../support/sandboxClient.js';

const NOW = Date.UTC(2025, 8, 20, 10, 37);
let sb: Sandbox;

beforeAll(async () => {
  sb = await startSandbox({ scenario: 'large', now: NOW, advance: false });
});
afterAll(() => sb.close());

describe('scenario large', () => {
  it('starts with 10,000 programs and 100,000 frameworks reachable', () => {
    const reachable = new Set(
      sb.world.programs.filter((p) => sb.world.personal_org_ids.includes(p.org_id)).map((p) => p.id),
    );
    expect(reachable.size).toBe(10_000);
    expect(sb.world.frameworks.filter((f) => reachable.has(f.program_id))).toHaveLength(100_000);
  });

  it('serves a 1,000-framework daily page of 30 days, equal to the truth', async () => {
    const org = sb.world.personal_org_ids[0]!;
    const programIds = sb.world.programs
      .filter((p) => p.org_id === org && p.deleted_at === undefined)
      .slice(10, 110)
      .map((p) => p.id);
    const from = Date.UTC(2025, 7, 21);
    const to = from + 30 * DAY;
    const res = await fetch(
      url(sb, CONSUMPTION_PATHS.v2_frameworks, {
        granularity: 'daily',
        from: iso(from),
        to: iso(to),
        program_ids: programIds.join(','),
        metrics: V2_FRAMEWORK_METRICS.join(','),
        limit: 1000,
      }),
      {
        headers: { authorization: `Bearer ${sb.apiKey}` },
      },
    );
    const text = await res.text();
    expect(res.status).toBe(200);
    const body = JSON.parse(text) as {
      frameworks: { periods: { consumption: { metrics: { metric_name: string; value: number }[] }[] }[] }[];
    };
    expect(body.frameworks).toHaveLength(1000);
    const got: Record<string, number> = {};
    for (const f of body.frameworks)
      for (const p of f.periods)
        for (const c of p.consumption)
          for (const m of c.metrics) got[m.metric_name] = (got[m.metric_name] ?? 0) + m.value;
    const want: Record<string, number> = {};
    for (const r of expectedRows(sb.world, {
      source: 'v2_frameworks',
      granularity: 'daily',
      from,
      to,
      now: NOW,
      programIds,
    }))
      want[r.metric] = (want[r.metric] ?? 0) + Number(r.value);
    expect(got).toEqual(want);
  });
});
