// Replay (src/sandbox/replay.ts) over real HTTP: every page a collector fetches, served from stored
// bytes, is byte for byte the generating sandbox's page at the same clock; a clock change renders
// afresh; the key, the rate limits and error bodies still apply per request.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSUMPTION_PATHS,
  MAX_PROGRAM_IDS,
  V1_METRICS,
  V2_FRAMEWORK_METRICS,
  V2_PROGRAM_METRICS,
} from '../../src/contract/api.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';

const NOW = Date.UTC(2026, 10, 21, 10, 30);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const UNLIMITED = { perMinute: 1e6, perSecondPerRoute: 1e6 };

interface Answer {
  status: number;
  contentType: string | null;
  sha256: string;
  body: string;
}

async function get(sb: Sandbox, pathAndQuery: string, key = sb.apiKey): Promise<Answer> {
  // A fixed request id: an error body carries it, so error bodies compare byte for byte too.
  const res = await fetch(sb.baseUrl + pathAndQuery, {
    headers: { authorization: `Bearer ${key}`, 'x-request-id': 'replay-test' },
  });
  const body = Buffer.from(await res.arrayBuffer());
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    sha256: createHash('sha256').update(body).digest('hex'),
    body: body.toString('utf8'),
  };
}

function withQuery(path: string, query: Record<string, string>): string {
  const q = new URLSearchParams(query).toString();
  return q === '' ? path : `${path}?${q}`;
}

/**
 * Every request a collector makes of `sb`'s world, cursors followed on `sb` itself: who the key is, its
 * organizations, the listings, the spending limits, and v1 and v2 consumption at each granularity.
 */
async function collectorRequests(sb: Sandbox): Promise<string[]> {
  const { world } = sb;
  const out: string[] = [];
  const paged = async (path: string, query: Record<string, string>): Promise<void> => {
    let cursor: string | undefined;
    for (let n = 0; n < 1000; n++) {
      const url = withQuery(path, cursor === undefined ? query : { ...query, cursor });
      out.push(url);
      const a = await get(sb, url);
      if (a.status !== 200) return;
      const next = (JSON.parse(a.body) as { pagination?: { cursor?: string } }).pagination?.cursor;
      if (next === undefined) return;
      cursor = next;
    }
  };
  out.push('/auth', '/users/me/organizations');
  await paged('/programs', { limit: '7' });
  const orgs = world.orgs.filter((o) => world.personal_org_ids.includes(o.id));
  for (const org of orgs) out.push(`/organizations/${org.id}/billing/spending_limit`);
  for (const p of world.programs.filter((x) => world.personal_org_ids.includes(x.org_id))) {
    out.push(`/programs/${p.id}`, `/programs/${p.id}/frameworks`, `/programs/${p.id}/snapshots`);
  }
  const windows = [
    { granularity: 'hourly', from: iso(NOW - 2 * DAY), to: iso(NOW + HOUR) },
    { granularity: 'daily', from: iso(NOW - 20 * DAY), to: iso(NOW + DAY) },
    { granularity: 'monthly', from: '2026-01-01T00:00:00Z', to: '2026-12-01T00:00:00Z' },
  ];
  for (const w of windows) {
    for (const org of orgs) {
      if (org.billing === 'legacy') {
        await paged(CONSUMPTION_PATHS.v1_programs, { ...w, org_id: org.id, limit: '5' });
        await paged(CONSUMPTION_PATHS.v1_programs, { ...w, org_id: org.id, metrics: V1_METRICS.join(',') });
        continue;
      }
      await paged(CONSUMPTION_PATHS.v2_programs, { ...w, org_id: org.id, metrics: V2_PROGRAM_METRICS.join(',') });
      const ids = world.programs.filter((p) => p.org_id === org.id).map((p) => p.id);
      for (let i = 0; i < ids.length; i += MAX_PROGRAM_IDS) {
        const programIds = ids.slice(i, i + MAX_PROGRAM_IDS).join(',');
        await paged(CONSUMPTION_PATHS.v2_frameworks, {
          ...w,
          program_ids: programIds,
          metrics: V2_FRAMEWORK_METRICS.join(','),
          limit: '20',
        });
      }
    }
    await paged(CONSUMPTION_PATHS.v1_programs, { ...w, include_v1_metrics: 'true' });
  }
  return out;
}

/** url -> status, content type and digest of what `sb` answers for each of `urls`. */
async function digests(sb: Sandbox, urls: readonly string[]): Promise<Map<string, Omit<Answer, 'body'>>> {
  const out = new Map<string, Omit<Answer, 'body'>>();
  for (const url of urls) {
    const { status, contentType, sha256 } = await get(sb, url);
    out.set(url, { status, contentType, sha256 });
  }
  return out;
}

let generating: Sandbox;
let replay: Sandbox;
let urls: string[];

beforeAll(async () => {
  const opts = { seed: 5, scenario: 'small', now: NOW, advance: false, limits: UNLIMITED } as const;
  generating = await startSandbox(opts);
  replay = await startSandbox({ ...opts, replay: true });
  urls = await collectorRequests(generating);
});
afterAll(async () => {
  await generating.close();
  await replay.close();
});

describe('replay serves the generating sandbox’s bytes', () => {
  it('every page a collector fetches: same status, content type and sha256, rendered once then replayed', async () => {
    expect(urls.length).toBeGreaterThan(100);
    const sources = Object.values(CONSUMPTION_PATHS);
    for (const path of [...sources, '/programs', '/billing/spending_limit'])
      expect(urls.some((u) => u.includes(path))).toBe(true);
    const expected = await digests(generating, urls);
    const statuses = new Set([...expected.values()].map((d) => d.status));
    expect(statuses.has(200)).toBe(true);
    expect([...statuses].some((s) => s >= 400)).toBe(true);

    replay.resetStats();
    const rendered = await digests(replay, urls);
    const replayed = await digests(replay, urls);
    for (const url of urls) {
      expect(rendered.get(url), url).toEqual(expected.get(url));
      expect(replayed.get(url), url).toEqual(expected.get(url));
    }
    // The second pass came from stored bytes (a URL may repeat within a pass: then it is a hit already).
    const stats = replay.stats();
    const distinct = new Set(urls).size;
    expect(stats.replay?.misses).toBe(distinct);
    expect(stats.replay?.hits).toBe(2 * urls.length - distinct);
    expect(stats.replay?.storedBytes).toBeGreaterThan(0);
    // Counted since the reset, stored bytes are the cache's own: still there after a reset.
    replay.resetStats();
    await get(replay, urls[0]!);
    expect(replay.stats().replay).toEqual({ hits: 1, misses: 0, storedBytes: stats.replay?.storedBytes });
    expect(generating.stats().replay).toBeUndefined();
  });

  it('the comparison tells worlds apart: a sandbox of another seed differs on consumption pages', async () => {
    const other = await startSandbox({ seed: 6, scenario: 'small', now: NOW, advance: false, limits: UNLIMITED });
    try {
      const consumption = urls.filter((u) => u.startsWith('/consumption_history/')).slice(0, 20);
      const ours = await digests(replay, consumption);
      const theirs = await digests(other, consumption);
      const differing = consumption.filter((u) => ours.get(u)?.sha256 !== theirs.get(u)?.sha256);
      expect(differing.length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });

  it('a clock change renders afresh: the answers at the new clock, not the stored ones', async () => {
    const later = NOW + 5 * HOUR + 17 * 60_000;
    const sample = urls.filter((u) => u.includes('granularity=hourly') || u.includes('/frameworks'));
    const before = await digests(replay, sample);
    generating.setNow(later);
    replay.setNow(later);
    try {
      const expected = await digests(generating, sample);
      const got = await digests(replay, sample);
      for (const url of sample) expect(got.get(url), url).toEqual(expected.get(url));
      expect(sample.filter((u) => before.get(u)?.sha256 !== got.get(u)?.sha256).length).toBeGreaterThan(0);
    } finally {
      generating.setNow(NOW);
      replay.setNow(NOW);
    }
  });

  it('a full room stores no more pages until emptied: POST /__sandbox/replay/clear makes room for the next phase', async () => {
    const [a, b] = [...new Set(urls.filter((u) => u.startsWith(CONSUMPTION_PATHS.v2_programs)))];
    const pageBytes = Buffer.byteLength((await get(generating, a!)).body);
    const small = await startSandbox({
      seed: 5,
      scenario: 'small',
      now: NOW,
      advance: false,
      limits: UNLIMITED,
      replay: { maxBytes: pageBytes },
    });
    const clear = (sb: Sandbox) =>
      fetch(sb.baseUrl.replace(/\/v1\/?$/, '') + '/__sandbox/replay/clear', { method: 'POST' });
    try {
      for (const u of [a!, b!, b!]) await get(small, u);
      // a filled the room: b was rendered twice.
      expect(small.stats().replay).toEqual({ hits: 0, misses: 3, storedBytes: pageBytes });
      const cleared = await clear(small);
      expect(cleared.status).toBe(200);
      expect(await cleared.json()).toEqual({ cleared: 1 });
      small.resetStats();
      const first = await get(small, b!);
      const again = await get(small, b!);
      expect(again.sha256).toBe(first.sha256);
      expect(again.sha256).toBe((await get(generating, b!)).sha256);
      expect(small.stats().replay).toEqual(expect.objectContaining({ hits: 1, misses: 1 }));
      // A sandbox that renders every answer has nothing to clear, and says so.
      expect((await clear(generating)).status).toBe(404);
    } finally {
      await small.close();
    }
  });

  it('the key, the rate limits and error bodies still apply to every replayed request', async () => {
    const url = urls.find((u) => u.startsWith(CONSUMPTION_PATHS.v2_programs))!;
    expect((await get(replay, url)).status).toBe(200);
    const unknownKey = await get(replay, url, 'not-a-key');
    expect(unknownKey.status).toBe(401);
    // Another key's reach: the program key sees only its program, so its answer is not the stored one.
    const programKey = await get(replay, url, replay.keys.program.key);
    const programKeyExpected = await get(generating, url, generating.keys.program.key);
    expect(programKey.sha256).toBe(programKeyExpected.sha256);
    expect(programKey.sha256).not.toBe((await get(replay, url)).sha256);

    // An error answer replayed carries the request's own id.
    let refused: string | undefined;
    for (const u of urls) if (refused === undefined && (await get(generating, u)).status >= 400) refused = u;
    const first = await fetch(replay.baseUrl + refused!, {
      headers: { authorization: `Bearer ${replay.apiKey}`, 'x-request-id': 'first' },
    });
    const second = await fetch(replay.baseUrl + refused!, {
      headers: { authorization: `Bearer ${replay.apiKey}`, 'x-request-id': 'second' },
    });
    expect(first.status).toBeGreaterThanOrEqual(400);
    expect(second.status).toBe(first.status);
    expect(((await first.json()) as { request_id: string }).request_id).toBe('first');
    expect(((await second.json()) as { request_id: string }).request_id).toBe('second');

    // Five requests a minute: the sixth and seventh are refused though their answer is stored.
    const limited = await startSandbox({
      seed: 5,
      scenario: 'small',
      now: NOW,
      advance: false,
      replay: true,
      limits: { perMinute: 5, perSecondPerRoute: 1e6 },
    });
    try {
      const answers: Response[] = [];
      for (let i = 0; i < 7; i++)
        answers.push(await fetch(limited.baseUrl + url, { headers: { authorization: `Bearer ${limited.apiKey}` } }));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
      expect(Number(answers[6]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(50);
      expect(limited.stats().throttledByLimit).toBe(2);
      expect(limited.stats().replay).toEqual(expect.objectContaining({ misses: 1, hits: 4 }));
    } finally {
      await limited.close();
    }
  });
});
