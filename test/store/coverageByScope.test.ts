// The kept coverage summary (migration 021, coverage_by_scope) against the summary recomputed from the
// coverage rows (the macro coverage_scope_summary, the query Coverage.summary() ran before), after random
// sequences of every kind of coverage write through the Store: batch commits (complete, partial),
// recorded rows (all four statuses), the same window again, overlapping windows, collected_at out of
// order and tied, and prune cutoffs. latestCompleteEnd is held to the query it replaced, over coverage.
// Seeded: the seed and the case count are printed; FC_SEED and FC_RUNS set them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CoverageStatus } from '../../src/domain/status.js';
import { listMigrations } from '../../src/store/migrations.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore, type Store } from '../../src/store/store.js';
import { at, spec, useTempDbPath, useTempStore } from '../support/store.js';

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 60;
/** A bound for a loaded machine (about 20 s idle), not a timing. */
const PROPERTY_TIMEOUT_MS = 300_000;

// Parameters: none. The summary recomputed from every coverage row, in Coverage.summary()'s order.
const RECOMPUTED_SQL = `SELECT * FROM coverage_scope_summary(NULL, NULL, NULL) ORDER BY source, granularity, scope`;
const KEPT_SQL = `SELECT * FROM coverage_by_scope ORDER BY source, granularity, scope`;
// Parameters: $source, $granularity, $by_scope, $scope. The query latestCompleteEnd ran before migration 021.
const OLD_LATEST_COMPLETE_END_SQL = `SELECT max(window_end) AS window_end FROM coverage
WHERE source = $source AND granularity = $granularity AND status = 'complete' AND (NOT $by_scope OR scope = $scope)`;

const SOURCES = ['v1_programs', 'v2_programs'] as const;
const SCOPES = ['org-1', 'org-2'] as const;
const GRANULARITIES = ['hourly', 'daily'] as const;
const STEP_HOURS = { hourly: 1, daily: 24 };

type Key = { source: (typeof SOURCES)[number]; scope: (typeof SCOPES)[number]; granularity: 'hourly' | 'daily' };
type Write = Key & { kind: 'batch' | 'record'; end: number; status: CoverageStatus; at: number; run: number };
type Op = Write | { kind: 'prune'; cutoffHour: number };

// A window is named by its end; its length follows from the end, so no two windows share an end and
// prune's trimmed starts never make two windows one. Lengths of 1 to 3 steps overlap their neighbours.
const windowOf = (g: Key['granularity'], end: number) => ({
  windowStart: at((end - 1 - (end % 3)) * STEP_HOURS[g]),
  windowEnd: at(end * STEP_HOURS[g]),
});
// collected_at from a few minutes: often out of order, sometimes tied (a window's data row and its failure too).
const collectedAt = (minute: number) => new Date(at(500).getTime() + minute * 60_000);

// Most writes go to one scope and few windows, so that the same window is written again often.
const keyArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Key>({ source: 'v2_programs', scope: 'org-1', granularity: 'hourly' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      source: fc.constantFrom(...SOURCES),
      scope: fc.constantFrom(...SCOPES),
      granularity: fc.constantFrom(...GRANULARITIES),
    }),
  },
);
const common = { end: fc.integer({ min: 1, max: 5 }), at: fc.integer({ min: 0, max: 12 }), run: fc.nat(3) };
const writeArb: fc.Arbitrary<Op> = fc
  .oneof(
    fc.record({
      ...common,
      kind: fc.constant('batch' as const),
      key: keyArb,
      status: fc.constantFrom<CoverageStatus>('complete', 'partial'),
    }),
    fc.record({
      ...common,
      kind: fc.constant('record' as const),
      key: keyArb,
      status: fc.constantFrom<CoverageStatus>('complete', 'partial', 'failed', 'not_eligible'),
    }),
  )
  .map(({ key, ...w }) => ({ ...key, ...w }));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 12, arbitrary: writeArb },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('prune' as const), cutoffHour: fc.integer({ min: 0, max: 9 }) }),
  },
);

async function apply(store: Store, op: Op): Promise<void> {
  if (op.kind === 'prune') {
    const cutoff = at(op.cutoffHour);
    await store.usage.removeHourlyBefore('prune', cutoff, await store.usage.hourlyDaysBefore(cutoff));
    return;
  }
  const window = windowOf(op.granularity, op.end);
  const runId = `run-${op.run}`;
  if (op.kind === 'record') {
    const unsuccessful = op.status === 'failed' || op.status === 'not_eligible';
    await store.coverage.record({
      ...op,
      ...window,
      runId,
      collectedAt: collectedAt(op.at),
      detail: unsuccessful ? `${op.status} at ${op.at}` : null,
    });
    return;
  }
  const batch = store.usage.beginBatch(
    spec({
      ...window,
      granularity: op.granularity,
      scope: { orgId: op.scope },
      coverage: { source: op.source, scope: op.scope, status: op.status as 'complete' | 'partial' },
      runId,
      collectedAt: collectedAt(op.at),
    }),
  );
  await batch.commit();
}

/** The kept summary equals the recomputed one, and summary() answers from it. */
async function expectKept(store: Store, history: Op[]): Promise<void> {
  const sql = rawSql(store);
  const recomputed = await sql.query(RECOMPUTED_SQL);
  expect(await sql.query(KEPT_SQL), JSON.stringify(history)).toEqual(recomputed);
  expect((await store.coverage.summary()).map((s) => [s.source, s.granularity, s.scope, s.completeWindows])).toEqual(
    recomputed.map((r) => [r.source, r.granularity, r.scope, Number(r.complete_windows)]),
  );
}

/** As expectKept, and latestCompleteEnd answers as the query over coverage did, for every key. */
async function expectExact(store: Store, history: Op[]): Promise<void> {
  await expectKept(store, history);
  const sql = rawSql(store);
  for (const source of SOURCES)
    for (const granularity of GRANULARITIES)
      for (const scope of [undefined, ...SCOPES]) {
        const [old] = await sql.query<{ window_end: Date | null }>(OLD_LATEST_COMPLETE_END_SQL, {
          source,
          granularity,
          by_scope: scope !== undefined,
          scope: scope ?? null,
        });
        expect(
          await store.coverage.latestCompleteEnd(source, granularity, scope),
          `${source} ${granularity} ${scope}`,
        ).toEqual(old!.window_end);
      }
}

describe('coverage_by_scope, the summary kept with every coverage write', () => {
  const store = useTempStore();

  it(
    `equals the summary recomputed from coverage after any sequence of writes and prunes (${RUNS} sequences)`,
    async () => {
      const tally = { writes: 0, prunes: 0, scopes: 0 };
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 14 }), async (ops) => {
          await rawSql(store()).run('DELETE FROM coverage; DELETE FROM coverage_by_scope;');
          for (const [i, op] of ops.entries()) {
            await apply(store(), op);
            // The kept rows after every write; latestCompleteEnd (a max over them) once a sequence ends.
            if (i < ops.length - 1) await expectKept(store(), ops.slice(0, i + 1));
            else await expectExact(store(), ops);
            if (op.kind === 'prune') tally.prunes++;
            else tally.writes++;
          }
          tally.scopes += (await store().coverage.summary()).length;
        }),
        { seed: SEED, numRuns: RUNS },
      );
      console.log(`fast-check coverage writes: seed ${SEED}, ${RUNS} sequences: ${JSON.stringify(tally)}`);
      expect(Math.min(tally.writes, tally.prunes, tally.scopes)).toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('folds a newer row in, and recomputes a scope whose latest or only complete row was replaced by an older or lesser one', async () => {
    const s = store();
    const key = { source: 'v2_programs', granularity: 'hourly' as const, scope: 'org-1', runId: 'r' };
    const write = (h: number, status: CoverageStatus, minute: number) =>
      s.coverage.record({ ...key, windowStart: at(h), windowEnd: at(h + 1), status, collectedAt: collectedAt(minute) });
    await write(0, 'complete', 4);
    // The same window again, newer: folded in, one complete window still.
    await write(0, 'complete', 5);
    expect((await s.coverage.summary())[0]).toMatchObject({ completeWindows: 1, lastCollectedAt: collectedAt(5) });
    await write(1, 'complete', 6);
    // The same window again, partial and collected earlier: its complete row goes, the latest is window 1's.
    await write(1, 'partial', 1);
    expect((await s.coverage.summary())[0]).toMatchObject({
      lastCompleteEnd: at(1),
      lastDataEnd: at(2),
      completeWindows: 1,
      lastCollectedAt: collectedAt(5),
      lastCompleteCollectedAt: collectedAt(5),
      lastStatus: 'complete',
    });
    // A failure of window 0 at the instant of its data row counts as the later: it was written after.
    await write(0, 'failed', 5);
    expect((await s.coverage.summary())[0]).toMatchObject({ completeWindows: 1, lastStatus: 'failed' });
    expect(await s.coverage.latestCompleteEnd('v2_programs', 'hourly')).toEqual(at(1));
    // Window 0's complete row, the scope's last, replaced by a newer partial one: nothing is complete.
    await write(0, 'partial', 9);
    expect((await s.coverage.summary())[0]).toMatchObject({
      firstCompleteStart: null,
      lastCompleteEnd: null,
      lastDataEnd: at(2),
      completeWindows: 0,
      lastCompleteCollectedAt: null,
      lastStatus: 'partial',
    });
    await expectExact(s, []);
  });
});

describe('migration 021', () => {
  const dbPath = useTempDbPath();

  it('fills coverage_by_scope from the coverage rows a file already holds', async () => {
    const before = listMigrations().filter((m) => m.version < 21);
    let s = await openStore({ path: dbPath(), migrations: before });
    await rawSql(s).run(
      `INSERT INTO coverage VALUES
      ('v2_programs', 'hourly', 'org-1', $h0, $h1, 'complete', 5, 'r1', $t1, NULL),
      ('v2_programs', 'hourly', 'org-1', $h1, $h2, 'partial', 2, 'r2', $t2, NULL),
      ('v2_programs', 'hourly', 'org-1', $h1, $h2, 'failed', 0, 'r3', $t2, 'HTTP 503'),
      ('v1_programs', 'daily', 'all', $h0, $h2, 'not_eligible', 0, 'r1', $t1, '403 plan')`,
      {
        h0: at(0),
        h1: at(1),
        h2: at(2),
        t1: collectedAt(1),
        t2: collectedAt(2),
      },
    );
    await s.close();
    s = await openStore({ path: dbPath() });
    try {
      expect(await s.coverage.summary()).toEqual([
        {
          source: 'v1_programs',
          granularity: 'daily',
          scope: 'all',
          firstCompleteStart: null,
          lastCompleteEnd: null,
          lastDataEnd: null,
          completeWindows: 0,
          lastCollectedAt: collectedAt(1),
          lastCompleteCollectedAt: null,
          lastStatus: 'not_eligible',
          lastDetail: '403 plan',
          lastRunId: 'r1',
        },
        {
          source: 'v2_programs',
          granularity: 'hourly',
          scope: 'org-1',
          firstCompleteStart: at(0),
          lastCompleteEnd: at(1),
          lastDataEnd: at(2),
          completeWindows: 1,
          lastCollectedAt: collectedAt(2),
          lastCompleteCollectedAt: collectedAt(1),
          lastStatus: 'failed',
          lastDetail: 'HTTP 503',
          lastRunId: 'r3',
        },
      ]);
      await expectExact(s, []);
    } finally {
      await s.close();
    }
  });
});
