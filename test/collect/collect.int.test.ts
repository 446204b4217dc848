import { getEventListeners } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANULARITIES, SOURCES } from '../../src/domain/granularity.js';
import { collectCommand } from '../../src/cli/collect.js';
import { UsageError } from '../../src/domain/errors.js';
import { call } from '../support/sandboxClient.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import { completeWindows, storedSums, truthSums, usageFingerprint } from '../support/usage.js';
import { silentLogger } from '../../src/log.js';
import { rawSql } from '../../src/store/rawSql.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');

function tmpDb(): string {
  return join(mkdtempSync(join(tmpdir(), 'usage-collect-')), 'usage.duckdb');
}

async function run(sb: Sandbox, db: string, extra: Parameters<typeof collectCommand>[0] = {}) {
  return collectCommand({
    db,
    env: { USAGE_API_KEY: sb.apiKey },
    baseUrl: sb.baseUrl,
    now: () => sb.now(),
    log: silentLogger,
    ...extra,
  });
}

async function expectMatchesTruth(sb: Sandbox, db: string) {
  const store = await openStore({ path: db, readOnly: true });
  try {
    let compared = 0;
    for (const g of GRANULARITIES) {
      for (const source of SOURCES) {
        const windows = await completeWindows(store, source, g);
        const truth = truthSums(sb, source, g, windows, sb.now());
        const stored = await storedSums(store, source, g);
        expect(stored, `${source} ${g}`).toEqual(truth);
        compared += truth.size;
      }
    }
    return compared;
  } finally {
    await store.close();
  }
}

describe('collect against the sandbox', () => {
  let sb: Sandbox;
  const db = tmpDb();
  let first: Awaited<ReturnType<typeof run>>;

  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', now: NOW, advance: false });
    first = await run(sb, db);
  });
  afterAll(async () => sb?.close());

  it('loads every value of v1 and v2, programs and frameworks, at every granularity, equal to the truth', async () => {
    expect(first.error).toBeUndefined();
    expect(first.exitCode).toBe(0);
    const statuses = new Set(first.scopes.map((s) => `${s.source}:${s.status}`));
    for (const s of [
      'v1_programs:complete',
      'v2_programs:complete',
      'v2_frameworks:complete',
      'v1_programs:not_eligible',
      'v2_programs:not_eligible',
    ]) {
      expect(statuses).toContain(s);
    }
    expect(await expectMatchesTruth(sb, db)).toBeGreaterThan(100);
    expect(sb.stats().violations.total).toBe(0);
  });

  it("leaves no abort listener on the caller's signal once it returns (the daemon passes a signal per run)", async () => {
    const stop = new AbortController();
    const r = await run(sb, db, { signal: stop.signal });
    expect(r.exitCode).toBe(0);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('changes nothing when run twice', async () => {
    const store = await openStore({ path: db, readOnly: true });
    const before = await usageFingerprint(store);
    await store.close();
    const again = await run(sb, db);
    expect(again.exitCode).toBe(0);
    const store2 = await openStore({ path: db, readOnly: true });
    const after = await usageFingerprint(store2).finally(() => store2.close());
    expect(after).toEqual(before);
  });

  it('corrects restated recent buckets on the next incremental run', async () => {
    sb.setNow(NOW + 40 * 60_000); // recent hours settle further as the clock moves
    const later = await run(sb, db);
    expect(later.exitCode).toBe(0);
    const hourly = later.scopes.find(
      (s) => s.source === 'v2_programs' && s.granularity === 'hourly' && s.status === 'complete',
    )!;
    // incremental: only the settle window, not the whole look-back
    expect(Date.parse(hourly.to!) - Date.parse(hourly.from!)).toBeLessThanOrEqual(7 * 3_600_000);
    await expectMatchesTruth(sb, db);
  });

  it("keeps the names of the organizations the key lists (the reports' billing account names)", async () => {
    const store = await openStore({ path: db, readOnly: true });
    const rows = await rawSql(store)
      .query<{ org_id: string; name: string | null }>('SELECT org_id, name FROM organizations ORDER BY org_id')
      .finally(() => store.close());
    const reply = await call(sb, '/users/me/organizations');
    const listed = (reply.body as { organizations: { id: string; name: string }[] }).organizations.map((o) => ({
      org_id: o.id,
      name: o.name,
    }));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows).toEqual(listed.sort((a, b) => (a.org_id < b.org_id ? -1 : 1)));
  });

  it('publishes a copy analysts can open read-only', async () => {
    expect(first.analystCopy).toMatch(/usage\.analyst\.duckdb$/);
    const copy = await openStore({ path: first.analystCopy!, readOnly: true });
    const [row] = await rawSql(copy).query<{ n: bigint }>('SELECT count(*) AS n FROM usage_program');
    expect(Number(row!.n)).toBeGreaterThan(0);
    await copy.close();
  });
});

describe('collect refuses bad input before any request', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', now: NOW, advance: false });
  });
  afterAll(async () => sb?.close());

  it.each([
    [{ from: 'last tuesday' }, /--from "last tuesday" is not a date/],
    [{ from: '2026-11-10', to: '2026-11-01' }, /--to .* is not after --from/],
    [{ granularity: 'weekly' }, /--granularity "weekly": unknown value "weekly"/],
    [{ from: '2026-01-01', granularity: 'hourly' }, /too far back for hourly data/],
    [{ orgs: ',' }, /--orgs is empty/],
    [{ baseUrl: 'not a url' }, /is not a URL/],
  ])('%j', async (flags, message) => {
    sb.resetStats();
    const err = await run(sb, tmpDb(), flags).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(message);
    expect(sb.stats().total).toBe(0);
  });

  it('refuses a missing key, naming the variables to set', async () => {
    const err = await collectCommand({ db: tmpDb(), env: {}, baseUrl: sb.baseUrl, log: silentLogger }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/USAGE_API_KEY/);
  });
});

// Each case has a sandbox of its own (its own rate budget): they run at once, overlapping their paced waits.
describe.concurrent('collect under faults and with huge counters', () => {
  it('completes with the same data under 503, 423, 429 and dropped connections, with no rate-limit violation', async ({
    expect,
  }) => {
    const sb = await startSandbox({ scenario: 'small', now: NOW, advance: false, faultRate: 0.12, seed: 7 });
    try {
      const db = tmpDb();
      const r = await run(sb, db);
      expect(r.error).toBeUndefined();
      expect(r.exitCode).toBe(0);
      const stats = sb.stats();
      expect(stats.faults['503'] + stats.faults['423'] + stats.faults['429'] + stats.faults.drop).toBeGreaterThan(3);
      expect(stats.violations.total).toBe(0);
      expect(r.retries).toBeGreaterThan(0);
      await expectMatchesTruth(sb, db);
    } finally {
      await sb.close();
    }
  });

  it('keeps values above 2^53 exactly', async ({ expect }) => {
    const sb = await startSandbox({ scenario: 'bigint', now: NOW, advance: false });
    try {
      const db = tmpDb();
      const r = await run(sb, db, { granularity: 'daily,monthly' });
      expect(r.exitCode).toBe(0);
      await expectMatchesTruth(sb, db);
      const store = await openStore({ path: db, readOnly: true });
      const [row] = await rawSql(store).query<{ m: bigint }>('SELECT max(value) AS m FROM usage_program');
      expect(BigInt(row!.m)).toBeGreaterThan(2n ** 53n);
      await store.close();
    } finally {
      await sb.close();
    }
  });
});
