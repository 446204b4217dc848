// Raw consumption pages loaded by DuckDB's JSON reader, each page in its own transaction, then a sweep.
import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import type { UsageBatchSpec } from '../../src/store/types.js';
import { useTempStore } from '../support/store.js';

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
          metrics: [{ metric_name: 'compute_unit_seconds', value: '__V__' }, { metric_name: 'root_branch_bytes_month', value: 0 }],
        })),
      },
    ],
  }));
  // Values are spliced in as bare literals so that integers beyond 2^53 stay exact in the text.
  let json = JSON.stringify({ programs: items, ...(cursor ? { pagination: { cursor } } : {}) });
  for (const values of Object.values(programs)) for (const v of values) json = json.replace('"__V__"', String(v));
  return json;
}

async function rows(store: Store) {
  return store.query<{ program_id: string; timeframe_start: Date; value: bigint }>(
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
    const first = store.beginUsageBatch(spec('r1'));
    const p1 = await first.appendPage('v2_programs', page({ a: [1, '9007199254740993'], b: [5, 6] }, 'b'));
    expect(p1).toMatchObject({ items: 2, cursor: 'b', programIds: ['a', 'b'], rows: 4 });
    await first.appendPage('v2_programs', page({ c: [7, 8] }));
    expect(await first.commit()).toEqual({ rows: 6 });
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n], ['a', 9007199254740993n], ['b', 5n], ['b', 6n], ['c', 7n], ['c', 8n],
    ]);

    // Re-collected: a's second day restated, b lost its first day, c no longer returned at all.
    const second = store.beginUsageBatch(spec('r2'));
    await second.appendPage('v2_programs', page({ a: [1, 42], b: [0, 6] }));
    await second.commit();
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([['a', 1n], ['a', 42n], ['b', 6n]]);
    const [cov] = await store.query<{ rows: bigint; n: bigint }>(
      "SELECT arg_max(rows, collected_at) AS rows, count(*) AS n FROM coverage WHERE source = 'v2_programs'",
    );
    expect(cov).toEqual({ rows: 3n, n: 1n });
  });

  it('never duplicates a program that comes again on a later page of the same fetch', async () => {
    const b = store.beginUsageBatch(spec('r1'));
    await b.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4] }, 'b'));
    await b.appendPage('v2_programs', page({ b: [3, 5], c: [6, 7] }));
    await b.commit();
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n], ['a', 2n], ['b', 3n], ['b', 5n], ['c', 6n], ['c', 7n],
    ]);
  });

  it('shows nothing of a scope before its commit: an aborted batch leaves the data and coverage it had', async () => {
    const first = store.beginUsageBatch(spec('r1'));
    await first.appendPage('v2_programs', page({ a: [1, 2] }));
    await first.commit();
    const second = store.beginUsageBatch(spec('r2'));
    expect(await second.appendPage('v2_programs', page({ a: [10, 20] }, 'a'))).toMatchObject({ rows: 2 });
    await second.appendPage('v2_programs', page({ b: [5, 6] }, 'b'));
    // Pages fetched but not committed are not visible to a reader, and an abort drops them.
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([['a', 1n], ['a', 2n]]);
    await second.abort();
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([['a', 1n], ['a', 2n]]);
    const cov = await store.query<{ run_id: string; rows: bigint }>("SELECT run_id, rows FROM coverage WHERE source = 'v2_programs'");
    expect(cov).toEqual([{ run_id: 'r1', rows: 2n }]);
  });

  it('a program repeated on a later page (a listing that shifted) is taken from its latest page, once', async () => {
    const b = store.beginUsageBatch(spec('r1'));
    await b.appendPage('v2_programs', page({ a: [1, 2], b: [3, 4] }, 'b'));
    await b.appendPage('v2_programs', page({ b: [30, 40], c: [5, 6] }));
    expect(await b.commit()).toEqual({ rows: 6 });
    expect((await rows(store)).map((r) => [r.program_id, r.value])).toEqual([
      ['a', 1n], ['a', 2n], ['b', 30n], ['b', 40n], ['c', 5n], ['c', 6n],
    ]);
  });

  it('refuses a page that is not the documented shape and leaves the table as it was', async () => {
    const ok = store.beginUsageBatch(spec('r1'));
    await ok.appendPage('v2_programs', page({ a: [1, 2] }));
    await ok.commit();
    const bad = store.beginUsageBatch(spec('r2'));
    await expect(bad.appendPage('v2_programs', page({ a: ['"many"', 3] }))).rejects.toThrow(/NOT NULL constraint failed: staging_usage\.value/);
    await expect(bad.appendPage('v2_programs', '{"programs": [')).rejects.toThrow(/Malformed JSON|Invalid Input/);
    await bad.abort();
    expect((await rows(store)).map((r) => r.value)).toEqual([1n, 2n]);
  });

  it('reports a body without the items array as items: null', async () => {
    const b = store.beginUsageBatch(spec('r1'));
    expect(await b.appendPage('v2_programs', '{"error": "nope"}')).toMatchObject({ items: null, rows: 0 });
    await b.abort();
  });
});
