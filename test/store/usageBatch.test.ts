import { beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { openStore, type Store, UsageBatchError } from '../../src/store/store.js';
import { at, dump, hourlyRows, load, spec, tempDir, useTempStore } from '../support/store.js';
import { appendRows } from '../support/rowLoader.js';
import { rawSql } from '../../src/store/rawSql.js';

const currentStore = useTempStore();
let store: Store;
beforeEach(() => {
  store = currentStore();
});

const day = spec({ windowStart: at(0), windowEnd: at(24) });

describe('usage batches replace exactly their window and scope', () => {
  it('loading the same window twice gives the same rows, with one coverage row', async () => {
    const rows = hourlyRows({ programs: ['p1', 'p2'], fromHour: 0, toHour: 24 });
    expect(await load(store, day, rows)).toBe(96);
    const first = await dump(store);
    expect(await load(store, { ...day, runId: 'run-2' }, rows)).toBe(96);
    expect(await dump(store)).toEqual(first);
    expect(first).toHaveLength(96);
    const cov = await rawSql(store).query<{ n: bigint; rows: bigint; run_id: string }>(
      'SELECT count(*) OVER () AS n, rows, run_id FROM coverage',
    );
    expect(cov).toEqual([{ n: 1n, rows: 96n, run_id: 'run-2' }]);
    const runIds = await rawSql(store).query<{ run_id: string }>('SELECT DISTINCT run_id FROM usage_program');
    expect(runIds).toEqual([{ run_id: 'run-2' }]);
  });

  it('corrects a restated value and removes a value that vanished', async () => {
    await load(store, day, hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, value: () => 5n }));
    const again = hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, value: (_p, h) => (h === 3 ? 7n : 5n) })
      // hour 4 compute vanished (absent means 0)
      .filter((r) => !(r.timeframe_start.getTime() === at(4).getTime() && r.metric === 'compute_unit_seconds'));
    await load(store, day, again);
    const got = await rawSql(store).query<{ h: bigint; metric: string; value: bigint }>(
      'SELECT hour(timeframe_start)::BIGINT AS h, metric, value FROM usage_program WHERE hour(timeframe_start) IN (3, 4) ORDER BY h, metric',
    );
    expect(got).toEqual([
      { h: 3n, metric: 'compute_unit_seconds', value: 7n },
      { h: 3n, metric: 'public_network_transfer_bytes', value: 7n },
      { h: 4n, metric: 'public_network_transfer_bytes', value: 5n },
    ]);
    expect(await rawSql(store).query('SELECT count(*) AS n FROM usage_program')).toEqual([{ n: 47n }]);
  });

  it('leaves rows outside the window, the org, the api version and the granularity untouched', async () => {
    const twoDays = hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 48 });
    await load(store, spec({ windowStart: at(0), windowEnd: at(48) }), twoDays);
    const otherOrg = hourlyRows({ org: 'org-2', programs: ['q1'], fromHour: 0, toHour: 24 });
    await load(
      store,
      spec({
        windowStart: at(0),
        windowEnd: at(24),
        scope: { orgId: 'org-2' },
        coverage: { source: 'v2_programs', scope: 'org-2', status: 'complete' },
      }),
      otherOrg,
    );
    const v1 = hourlyRows({ org: null, programs: ['p1'], fromHour: 0, toHour: 24, metrics: ['active_time_seconds'] });
    await load(
      store,
      spec({
        apiVersion: 'v1',
        windowStart: at(0),
        windowEnd: at(24),
        scope: {},
        coverage: { source: 'v1_programs', scope: 'all', status: 'complete' },
      }),
      v1,
    );
    const daily = hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 1 }).map((r) => ({
      ...r,
      timeframe_end: at(24),
    }));
    await load(store, spec({ granularity: 'daily', windowStart: at(0), windowEnd: at(24) }), daily);
    const before = await dump(store);

    // Re-collect org-1 hourly v2 for day 1 only, with program p1 now gone entirely.
    await load(store, day, []);
    const after = await dump(store);
    const removed = before.filter((k) => !after.includes(k));
    expect(removed).toHaveLength(48); // p1, org-1, v2 hourly, hours 0..23, 2 metrics
    expect(removed.every((k) => k.startsWith('hourly|org-1|p1|v2|') && k.includes('|2025-01-01T'))).toBe(true);
    expect(after.filter((k) => !before.includes(k))).toEqual([]);
    const left = await rawSql(store).query<{ api_version: string; granularity: string; n: bigint }>(
      'SELECT api_version, granularity, count(*) AS n FROM usage_program GROUP BY ALL ORDER BY ALL',
    );
    expect(left).toEqual([
      { api_version: 'v1', granularity: 'hourly', n: 24n },
      { api_version: 'v2', granularity: 'daily', n: 2n },
      { api_version: 'v2', granularity: 'hourly', n: 48n + 48n }, // day 2 of p1 + org-2
    ]);
  });

  it('a program-scoped batch replaces only its programs', async () => {
    await load(
      store,
      spec({
        windowStart: at(0),
        windowEnd: at(24),
        scope: {},
        coverage: { source: 'v2_programs', scope: 'all', status: 'complete' },
      }),
      hourlyRows({ programs: ['p1', 'p2', 'p3'], fromHour: 0, toHour: 24, value: () => 1n }),
    );
    await load(
      store,
      spec({
        windowStart: at(0),
        windowEnd: at(24),
        scope: { programIds: ['p1', 'p2'] },
        coverage: { source: 'v2_programs', scope: 'programs:p1..p2#2', status: 'complete' },
      }),
      hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, value: () => 2n }),
    );
    const got = await rawSql(store).query(
      'SELECT program_id, sum(value) AS total, count(*) AS n FROM usage_program GROUP BY ALL ORDER BY ALL',
    );
    expect(got).toEqual([
      { program_id: 'p1', total: 96n, n: 48n },
      { program_id: 'p3', total: 48n, n: 48n },
    ]);
  });

  it('keeps a bucket that appears in two periods (plan change) as two rows', async () => {
    const a = hourlyRows({ programs: ['p1'], fromHour: 5, toHour: 6, period: 'per-a', value: () => 10n });
    const b = hourlyRows({ programs: ['p1'], fromHour: 5, toHour: 6, period: 'per-b', value: () => 20n });
    expect(await load(store, day, [...a, ...b])).toBe(4);
    expect(await load(store, day, [...a, ...b])).toBe(4);
    expect(
      await rawSql(store).query('SELECT period_id, sum(value) AS s FROM usage_program GROUP BY ALL ORDER BY ALL'),
    ).toEqual([
      { period_id: 'per-a', s: 20n },
      { period_id: 'per-b', s: 40n },
    ]);
  });

  it('keeps int64 values exactly, beyond 2^53 and up to 2^63-1', async () => {
    const big = [2n ** 53n + 1n, 2n ** 63n - 1n, 0n, 9_007_199_254_740_993n * 1000n + 7n];
    const rows = hourlyRows({
      programs: ['p1'],
      fromHour: 0,
      toHour: big.length,
      metrics: ['compute_unit_seconds'],
      value: (_p, h) => big[h]!,
    });
    await load(store, day, rows);
    const got = await rawSql(store).query<{ value: bigint }>(
      'SELECT value FROM usage_program ORDER BY timeframe_start',
    );
    expect(got.map((r) => r.value)).toEqual(big);
    const [sum] = await rawSql(store).query<{ s: bigint }>('SELECT sum(value)::HUGEINT AS s FROM usage_program');
    expect(sum!.s).toBe(big.reduce((a, b) => a + b, 0n));
    const [match] = await rawSql(store).query<{ n: bigint }>(
      'SELECT count(*) AS n FROM usage_program WHERE value = $v',
      { v: 2n ** 53n + 1n },
    );
    expect(match!.n).toBe(1n);
  });

  it('refuses a batch with a duplicate key, naming it, and changes nothing', async () => {
    await load(store, day, hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, value: () => 1n }));
    const before = await dump(store);
    const rows = hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24, value: () => 9n });
    const b = store.usage.beginBatch(day);
    await appendRows(b, rows);
    await appendRows(b, [rows[5]!]);
    const err = await b.commit().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageBatchError);
    expect((err as Error).message).toMatch(
      /program_id=p1 period_id=period-p1 timeframe_start=2025-01-01T02:00:00.000Z metric=public_network_transfer_bytes copies=2/,
    );
    expect(await dump(store)).toEqual(before);
    expect(await rawSql(store).query('SELECT count(*) AS n FROM coverage')).toEqual([{ n: 1n }]);
  });

  it('refuses rows outside the window or the org, and framework rows without framework_id', async () => {
    const outside = hourlyRows({ programs: ['p1'], fromHour: 24, toHour: 25 });
    await expect(load(store, day, outside)).rejects.toThrow(/outside the batch's window/);
    const otherOrg = hourlyRows({ org: 'org-2', programs: ['p1'], fromHour: 0, toHour: 1 });
    await expect(load(store, day, otherOrg)).rejects.toThrow(/org_id=org-2/);
    const noOrg = hourlyRows({ org: null, programs: ['p1'], fromHour: 0, toHour: 1 });
    await expect(load(store, day, noOrg)).rejects.toThrow(/org_id=NULL/);
    const fwSpec = spec({
      table: 'usage_framework',
      apiVersion: undefined,
      windowStart: at(0),
      windowEnd: at(24),
      coverage: { source: 'v2_frameworks', scope: 'programs:p1..p1#1', status: 'complete' },
    });
    await expect(load(store, fwSpec, hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 1 }))).rejects.toThrow(
      /framework_id/,
    );
    expect(
      await rawSql(store).query(
        'SELECT (SELECT count(*) FROM usage_program) + (SELECT count(*) FROM usage_framework) + (SELECT count(*) FROM coverage) AS n',
      ),
    ).toEqual([{ n: 0n }]);
  });

  it('loads framework usage with its own key and replace semantics', async () => {
    const fwSpec = spec({
      table: 'usage_framework',
      apiVersion: undefined,
      windowStart: at(0),
      windowEnd: at(24),
      scope: { programIds: ['p1', 'p2'] },
      coverage: { source: 'v2_frameworks', scope: 'programs:p1..p2#2', status: 'partial' },
    });
    const rows = hourlyRows({
      programs: ['p1', 'p2'],
      fromHour: 0,
      toHour: 24,
      frameworks: (p) => [`${p}-main`, `${p}-dev`],
    });
    expect(await load(store, fwSpec, rows)).toBe(192);
    expect(
      await load(
        store,
        fwSpec,
        rows.filter((r) => r.framework_id !== 'p2-dev'),
      ),
    ).toBe(144);
    expect(
      await rawSql(store).query('SELECT framework_id, count(*) AS n FROM usage_framework GROUP BY ALL ORDER BY ALL'),
    ).toEqual([
      { framework_id: 'p1-dev', n: 48n },
      { framework_id: 'p1-main', n: 48n },
      { framework_id: 'p2-main', n: 48n },
    ]);
    const [cov] = await store.coverage.summary();
    expect(cov).toMatchObject({
      source: 'v2_frameworks',
      lastStatus: 'partial',
      lastCompleteEnd: null,
      lastDataEnd: at(24),
    });
  });

  it('abort and a failed append leave the database unchanged', async () => {
    await load(store, day, hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24 }));
    const before = await dump(store);
    const b = store.usage.beginBatch(day);
    await appendRows(b, hourlyRows({ programs: ['p9'], fromHour: 0, toHour: 24 }));
    await b.abort();
    await expect(b.commit()).rejects.toThrow(/closed/);
    const c = store.usage.beginBatch(day);
    const bad = hourlyRows({ programs: ['p9'], fromHour: 0, toHour: 2 }).map((r, i) =>
      i === 2 ? { ...r, value: 5 as unknown as bigint } : r,
    );
    await expect(appendRows(c, bad)).rejects.toThrow(/int64 bigint, got number 5/);
    await expect(c.commit()).rejects.toThrow(/closed/);
    const tooBig = hourlyRows({ programs: ['p9'], fromHour: 0, toHour: 1, value: () => 2n ** 63n });
    await expect(appendRows(store.usage.beginBatch(day), tooBig)).rejects.toThrow(
      /int64 bigint, got bigint 9223372036854775808 for p9/,
    );
    const noPeriod = hourlyRows({ programs: ['p9'], fromHour: 0, toHour: 1 }).map((r) => ({
      ...r,
      period_id: null as unknown as string,
    }));
    await expect(appendRows(store.usage.beginBatch(day), noPeriod)).rejects.toThrow(/usage row without period_id/);
    expect(await dump(store)).toEqual(before);
  });

  it('stages several batches at once and commits them one at a time', async () => {
    const specs = [0, 1, 2, 3].map((d) => spec({ windowStart: at(24 * d), windowEnd: at(24 * (d + 1)) }));
    const batches = specs.map((s) => store.usage.beginBatch(s));
    await Promise.all(
      batches.map((b, d) =>
        appendRows(b, hourlyRows({ programs: ['p1', 'p2'], fromHour: 24 * d, toHour: 24 * (d + 1) })),
      ),
    );
    const results = await Promise.all(batches.map((b) => b.commit()));
    expect(results.map((r) => r.rows)).toEqual([96, 96, 96, 96]);
    expect(await rawSql(store).query('SELECT count(*) AS n FROM usage_program')).toEqual([{ n: 384n }]);
    expect(await store.coverage.latestCompleteEnd('v2_programs', 'hourly', 'org-1')).toEqual(at(96));
  });
  it('stages pages of any size across data-chunk boundaries exactly', async () => {
    const programs = Array.from({ length: 60 }, (_, i) => `p${i}`);
    const rows = hourlyRows({
      programs,
      fromHour: 0,
      toHour: 24,
      metrics: ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month'],
      value: (p, h, m) => BigInt(p.length * 1_000_003 + h * 101 + m.charCodeAt(0)) * 2n ** 40n,
    });
    expect(rows.length).toBe(4320);
    const b = store.usage.beginBatch(day);
    for (const [from, to] of [
      [0, 2047],
      [2047, 4096],
      [4096, 4097],
      [4097, 4320],
    ] as const)
      await appendRows(b, rows.slice(from, to));
    expect(b.stagedRows).toBe(4320);
    expect(await b.commit()).toEqual({ rows: 4320 });
    const expected = rows
      .map(
        (r) =>
          `hourly|org-1|${r.program_id}|v2|${r.period_id}|${r.timeframe_start.toISOString().slice(0, 13)}|${r.metric}=${r.value}`,
      )
      .sort();
    expect(await dump(store)).toEqual(expected);
  });
  it('reuses its data chunk across full chunks and pages without carrying a value or a NULL over', async () => {
    // One metric per bucket, a different one from bucket to bucket, so that each refill of the chunk sets
    // and clears other cells than the fill before it; 5,760 buckets (two full chunks and a part), then a
    // second page of 1,440 that starts in the chunk the first one left.
    const metrics = ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month'];
    const programs = Array.from({ length: 300 }, (_, i) => `p${i}`);
    const rows = hourlyRows({
      programs,
      fromHour: 0,
      toHour: 24,
      metrics,
      value: (p, h, m) => 2n ** 62n + BigInt(p.length * 1_000_003 + h * 101 + m.length),
    }).filter(
      (r) => metrics.indexOf(r.metric) === (Number(r.program_id.slice(1)) + r.timeframe_start.getUTCHours()) % 3,
    );
    expect(rows.length).toBe(7200);
    const b = store.usage.beginBatch(day);
    await appendRows(b, rows.slice(0, 5760));
    await appendRows(b, rows.slice(5760));
    expect(await b.commit()).toEqual({ rows: 7200 });
    const expected = rows
      .map(
        (r) =>
          `hourly|org-1|${r.program_id}|v2|${r.period_id}|${r.timeframe_start.toISOString().slice(0, 13)}|${r.metric}=${r.value}`,
      )
      .sort();
    expect(await dump(store)).toEqual(expected);
  });
});

describe("a commit's insert on more threads", () => {
  it('a store opened on one thread commits the same rows and is on one thread again after', async () => {
    const t = tempDir();
    const one = await openStore({ path: join(t.dir, 'one.duckdb'), threads: 1 });
    try {
      const threads = async () =>
        (await rawSql(one).query<{ t: bigint }>("SELECT current_setting('threads')::BIGINT AS t"))[0]?.t;
      const rows = hourlyRows({ programs: ['p1', 'p2'], fromHour: 0, toHour: 24 });
      expect(await threads()).toBe(1n);
      expect(await load(one, day, rows)).toBe(96);
      expect(await threads()).toBe(1n);
      await load(store, day, rows);
      expect(await dump(one)).toEqual(await dump(store));
    } finally {
      await one.close();
      t.cleanup();
    }
  });
});
