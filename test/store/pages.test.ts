// Raw consumption pages loaded by DuckDB's JSON reader, checked strictly, staged, and committed with
// their scope in one transaction.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import type { UsageBatchSpec } from '../../src/store/types.js';
import { useTempStore } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const WINDOW = { windowStart: new Date('2026-11-01T00:00:00Z'), windowEnd: new Date('2026-11-03T00:00:00Z') };

function spec(runId: string): UsageBatchSpec {
  return {
    table: 'usage_program',
    apiVersion: 'v2',
    granularity: 'daily',
    ...WINDOW,
    scope: { orgId: 'org-a' },
    coverage: { source: 'v2_programs', scope: 'org-a', status: 'complete' },
    runId,
    collectedAt: new Date('2026-11-03T01:00:00Z'),
  };
}

/** A v2 programs page: each program has one period with daily buckets carrying compute values. */
function page(programs: Record<string, (number | string)[]>, cursor?: string): string {
  const items = Object.entries(programs).map(([id, values]) => ({
    program_id: id,
    periods: [
      {
        period_id: `pd-${id}`,
        period_plan: 'launch',
        period_start: '2026-10-01T00:00:00Z',
        consumption: values.map((_v, day) => ({
          timeframe_start: `2026-11-0${day + 1}T00:00:00Z`,
          timeframe_end: `2026-11-0${day + 2}T00:00:00Z`,
          metrics: [
            { metric_name: 'compute_unit_seconds', value: '__V__' },
            { metric_name: 'root_branch_bytes_month', value: 0 },
          ],
        })),
      },
    ],
  }));
  // Values are spliced in as bare literals so that integers beyond 2^53 stay exact in the text.
  let json = JSON.stringify({ programs: items, ...(cursor ? { pagination: { cursor } } : {}) });
  for (const values of Object.values(programs)) for (const v of values) json = json.replace('"__V__"', String(v));
  return json;
}

/** The row counts status shows (kept with each write) against a count of the bucket tables. */
async function expectCountsKept(store: Store): Promise<void> {
  const [n] = await rawSql(store).query<{ p: bigint; f: bigint }>(
    'SELECT (SELECT count(*) FROM usage_program_buckets) AS p, (SELECT count(*) FROM usage_framework_buckets) AS f',
  );
  expect(await store.usage.rowCounts()).toEqual({ usage_program: Number(n!.p), usage_framework: Number(n!.f) });
}

async function rows(store: Store) {
  return rawSql(store).query<{ program_id: string; timeframe_start: Date; value: bigint }>(
    'SELECT program_id, timeframe_start, value FROM usage_program ORDER BY program_id, timeframe_start',
  );
}

describe('page-loaded usage batches', () => {
  const currentStore = useTempStore();
  let store: Store;
  beforeEach(() => {
    store = currentStore();
  });

  it('loads pages exactly (int64 beyond 2^53, zeros left out), then a re-collection corrects, removes and sweeps', async () => {
    const first = store.usage.beginBatch(spec('r1'));
    const p1 = await first.appendPage('v2_programs', page({ a: [1, '9007199254740993'], b: [5, 6] }, 'b'));
    expect(p1).toMatchObject({ items: 2, cursor: 'b', programIds: ['a', 'b'], rows: 4 });
    await first.appendPage('v2_programs', page({ c: [7, 8] }));
    expect(await first.commit()).toEqual({ rows: 6 });
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n],
      ['a', 9007199254740993n],
      ['b', 5n],
      ['b', 6n],
      ['c', 7n],
      ['c', 8n],
    ]);
    await expectCountsKept(store);
    expect((await store.usage.rowCounts()).usage_program).toBe(6);

    // Re-collected: a's second day restated, b lost its first day, c no longer returned at all.
    const second = store.usage.beginBatch(spec('r2'));
    await second.appendPage('v2_programs', page({ a: [1, 42], b: [0, 6] }));
    await second.commit();
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n],
      ['a', 42n],
      ['b', 6n],
    ]);
    await expectCountsKept(store);
    expect((await store.usage.rowCounts()).usage_program).toBe(3);
    const [cov] = await rawSql(store).query<{ rows: bigint; n: bigint }>(
      "SELECT arg_max(rows, collected_at) AS rows, count(*) AS n FROM coverage WHERE source = 'v2_programs'",
    );
    expect(cov).toEqual({ rows: 3n, n: 1n });
  });

  it('refuses a program that comes again on a later page of the same fetch, writing nothing', async () => {
    const b = store.usage.beginBatch(spec('r1'));
    await b.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4] }, 'b'));
    await b.appendPage('v2_programs', page({ b: [3, 5], c: [6, 7] }));
    await expect(b.commit()).rejects.toThrow(/appears more than once/);
    expect(await rows(store)).toEqual([]);
    expect(await store.usage.rowCounts()).toEqual({ usage_program: 0, usage_framework: 0 });
  });

  it('shows nothing of a scope before its commit: an aborted batch leaves the data and coverage it had', async () => {
    const first = store.usage.beginBatch(spec('r1'));
    await first.appendPage('v2_programs', page({ a: [1, 2] }));
    await first.commit();
    const second = store.usage.beginBatch(spec('r2'));
    expect(await second.appendPage('v2_programs', page({ a: [10, 20] }, 'a'))).toMatchObject({ rows: 2 });
    await second.appendPage('v2_programs', page({ b: [5, 6] }, 'b'));
    // Pages fetched but not committed are not visible to a reader, and an abort drops them.
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n],
      ['a', 2n],
    ]);
    await second.abort();
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n],
      ['a', 2n],
    ]);
    const cov = await rawSql(store).query<{ run_id: string; rows: bigint }>(
      "SELECT run_id, rows FROM coverage WHERE source = 'v2_programs'",
    );
    expect(cov).toEqual([{ run_id: 'r1', rows: 2n }]);
  });

  it('a program repeated on a later page (a listing that shifted) fails the scope: the data and coverage stay as they were', async () => {
    const first = store.usage.beginBatch(spec('r1'));
    await first.appendPage('v2_programs', page({ a: [1, 2] }));
    await first.commit();
    const b = store.usage.beginBatch(spec('r2'));
    await b.appendPage('v2_programs', page({ a: [10, 20], b: [3, 4] }, 'b'));
    await b.appendPage('v2_programs', page({ b: [30, 40], c: [5, 6] }));
    await expect(b.commit()).rejects.toThrow(/appears more than once/);
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n],
      ['a', 2n],
    ]);
    const cov = await rawSql(store).query<{ run_id: string; rows: bigint }>(
      "SELECT run_id, rows FROM coverage WHERE source = 'v2_programs'",
    );
    expect(cov).toEqual([{ run_id: 'r1', rows: 2n }]);
  });

  // The duplicate check groups only the ids whose rows could repeat a key (store/bucketKeys.ts): each
  // way a key can repeat within one page must still be found, and a bucket split by a plan change kept.
  describe('keys repeated within one page', () => {
    const bucket = (day: number, metrics: Record<string, number>) => ({
      timeframe_start: `2026-11-0${day}T00:00:00Z`,
      timeframe_end: `2026-11-0${day + 1}T00:00:00Z`,
      metrics: Object.entries(metrics).map(([metric_name, value]) => ({ metric_name, value })),
    });
    const period = (id: string, plan: string, start: string, consumption: unknown[], end?: string) => ({
      period_id: id,
      period_plan: plan,
      period_start: start,
      ...(end ? { period_end: end } : {}),
      consumption,
    });
    const rawPage = (items: unknown[]) => JSON.stringify({ programs: items });

    it('refuses a bucket given twice in one period, even out of order', async () => {
      const b = store.usage.beginBatch(spec('r1'));
      await b.appendPage(
        'v2_programs',
        rawPage([
          {
            program_id: 'a',
            periods: [
              period('pd-a', 'launch', '2026-10-01T00:00:00Z', [
                bucket(2, { compute_unit_seconds: 1 }),
                bucket(1, { compute_unit_seconds: 2 }),
                bucket(2, { compute_unit_seconds: 3 }),
              ]),
            ],
          },
        ]),
      );
      await expect(b.commit()).rejects.toThrow(/program_id=a .*appears more than once/);
      expect(await rows(store)).toEqual([]);
    });

    it('refuses a program listed twice on one page, with another between', async () => {
      const b = store.usage.beginBatch(spec('r1'));
      await b.appendPage(
        'v2_programs',
        rawPage([
          {
            program_id: 'a',
            periods: [period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 1 })])],
          },
          {
            program_id: 'b',
            periods: [period('pd-b', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 1 })])],
          },
          {
            program_id: 'a',
            periods: [period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 5 })])],
          },
        ]),
      );
      await expect(b.commit()).rejects.toThrow(/program_id=a .*appears more than once/);
    });

    it('refuses a period listed twice in one item with the same metric, and folds one whose metrics came in parts', async () => {
      const twice = store.usage.beginBatch(spec('r1'));
      await twice.appendPage(
        'v2_programs',
        rawPage([
          {
            program_id: 'a',
            periods: [
              period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 1 })]),
              period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 2 })]),
            ],
          },
        ]),
      );
      await expect(twice.commit()).rejects.toThrow(/appears more than once/);

      const parts = store.usage.beginBatch(spec('r2'));
      await parts.appendPage(
        'v2_programs',
        rawPage([
          {
            program_id: 'a',
            periods: [
              period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { compute_unit_seconds: 1 })]),
              period('pd-a', 'launch', '2026-10-01T00:00:00Z', [bucket(1, { root_branch_bytes_month: 7 })]),
            ],
          },
        ]),
      );
      expect(await parts.commit()).toEqual({ rows: 2 });
      expect((await store.usage.rowCounts()).usage_program).toBe(1);
    });

    it('keeps a bucket that straddles a plan change once in each period', async () => {
      const b = store.usage.beginBatch(spec('r1'));
      await b.appendPage(
        'v2_programs',
        rawPage([
          {
            program_id: 'a',
            periods: [
              period(
                'pd-1',
                'launch',
                '2026-10-01T00:00:00Z',
                [bucket(1, { compute_unit_seconds: 1 }), bucket(2, { compute_unit_seconds: 2 })],
                '2026-11-02T12:00:00Z',
              ),
              period('pd-2', 'scale', '2026-11-02T12:00:00Z', [bucket(2, { compute_unit_seconds: 3 })]),
            ],
          },
        ]),
      );
      expect(await b.commit()).toEqual({ rows: 3 });
      expect((await rows(store)).map((r) => [r.timeframe_start.toISOString().slice(0, 10), r.value])).toEqual([
        ['2026-11-01', 1n],
        ['2026-11-02', 2n],
        ['2026-11-02', 3n],
      ]);
    });
  });

  it('refuses a page that is not the documented shape, naming the first offending path, and leaves the table as it was', async () => {
    const ok = store.usage.beginBatch(spec('r1'));
    await ok.appendPage('v2_programs', page({ a: [1, 2] }));
    await ok.commit();
    const cases: [string, RegExp][] = [
      [
        page({ a: [1, '"many"'] }),
        /consumption\[1\]\.metrics\[0\]\.value: expected a non-negative integer, got "many"/,
      ],
      [page({ a: ['1.5', 3] }), /consumption\[0\]\.metrics\[0\]\.value: expected an integer, got 1\.5/],
      [page({ a: ['9223372036854775808', 3] }), /\.value: 9223372036854775808 is beyond the int64 range/],
      [page({ a: ['-4', 3] }), /\.value: expected a non-negative integer, got -4/],
      // Literals JSON.parse would read as the integers 1, 1000 and 0: the exact path must see them as written.
      [page({ a: ['1.0', 3] }), /consumption\[0\]\.metrics\[0\]\.value: expected an integer, got 1\.0/],
      [page({ a: [3, '1e3'] }), /consumption\[1\]\.metrics\[0\]\.value: expected an integer, got 1e3/],
      [page({ a: [' \n\t 2.50', 3] }), /consumption\[0\]\.metrics\[0\]\.value: expected an integer, got 2\.50/],
      [page({ a: ['true', 3] }), /\.value: expected a non-negative integer, got true/],
      [page({ a: ['null', 3] }), /\.value: expected a non-negative integer, got null/],
      [
        page({ a: [1, 2] }).replace('"2026-11-01T00:00:00Z"', '"yesterday"'),
        /timeframe_start: expected an ISO 8601 date-time/,
      ],
      [
        page({ a: [1, 2] }).replace('"program_id":"a"', '"program_id":7'),
        /\$\.programs\[0\]\.program_id: expected a non-empty string id, got 7/,
      ],
      [page({ a: [1, 2] }).replace('"periods":[', '"periodz":['), /\$\.programs\[0\]\.periods: expected an array/],
    ];
    for (const [body, message] of cases) {
      const bad = store.usage.beginBatch(spec('r2'));
      await expect(bad.appendPage('v2_programs', body), body).rejects.toThrow(message);
      await bad.abort();
    }
    const bad = store.usage.beginBatch(spec('r2'));
    await expect(bad.appendPage('v2_programs', '{"programs": [')).rejects.toThrow(/not JSON/);
    await bad.abort();
    expect((await rows(store)).map((r) => r.value)).toEqual([1n, 2n]);
  });

  it('makes a scope visible whole: pages staged before a refused one never reach the table', async () => {
    const b = store.usage.beginBatch(spec('r1'));
    await b.appendPage('v2_programs', page({ a: [1, 2] }, 'a'));
    expect(await rows(store)).toEqual([]);
    await expect(b.appendPage('v2_programs', page({ b: ['-1', 2] }))).rejects.toThrow(/non-negative/);
    await expect(b.commit()).rejects.toThrow(/one of its pages was refused/);
    expect(await rows(store)).toEqual([]);
    expect(await rawSql(store).query('SELECT * FROM coverage')).toEqual([]);
  });

  it('refuses a program the inventory places in another organization', async () => {
    await store.inventory.upsertPrograms(
      [{ program_id: 'b', org_id: 'org-z', name: null, region_id: null, created_at: null }],
      { seenAt: new Date('2026-11-03T00:00:00Z') },
    );
    const b = store.usage.beginBatch(spec('r1'));
    await b.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4] }));
    await expect(b.commit()).rejects.toThrow(/program b, which the inventory places in organization org-z, not org-a/);
    expect(await rows(store)).toEqual([]);
    // A program returned with only zeros stages no row, and is checked all the same.
    const z = store.usage.beginBatch(spec('r2'));
    await z.appendPage('v2_programs', page({ a: [1, 2], b: [0, 0] }));
    await expect(z.commit()).rejects.toThrow(/program b, which the inventory places in organization org-z, not org-a/);
    expect(await rows(store)).toEqual([]);
    expect(await rawSql(store).query('SELECT count(*) AS n FROM coverage')).toEqual([{ n: 0n }]);
  });

  it('holds an answer that would delete more than the allowed share of the window, unless allowed', async () => {
    const ok = store.usage.beginBatch(spec('r1'));
    await ok.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4], c: [5, 6] }));
    await ok.commit();
    const held = store.usage.beginBatch({ ...spec('r2'), maxDeletionShare: 0.5 });
    await held.appendPage('v2_programs', '{"programs": []}');
    await expect(held.commit()).rejects.toThrow(/would delete 6 of the window's 6 stored rows .*--accept-deletions/);
    expect(await rows(store)).toHaveLength(6);
    // One program of three gone is within the share.
    const fine = store.usage.beginBatch({ ...spec('r3'), maxDeletionShare: 0.5 });
    await fine.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4] }));
    await fine.commit();
    expect((await rows(store)).map((r) => r.program_id)).toEqual(['a', 'a', 'b', 'b']);
    // Programs the answer returns with only zeros stage no row, yet were returned: their values go, not held.
    const zeros = store.usage.beginBatch({ ...spec('r4'), maxDeletionShare: 0.5 });
    await zeros.appendPage('v2_programs', page({ a: [0, 0], b: [0, 0] }));
    expect(await zeros.commit()).toEqual({ rows: 0 });
    expect(await rows(store)).toEqual([]);
  });

  it('reports a body without the items array as items: null', async () => {
    const b = store.usage.beginBatch(spec('r1'));
    expect(await b.appendPage('v2_programs', '{"error": "nope"}')).toMatchObject({ items: null, rows: 0 });
    await b.abort();
  });
});
