import { describe, expect, it } from 'vitest';
import { fillHistory, growthJson, type GrowthStep } from '../../bench/growth.js';
import { atClock } from '../../bench/atClock.js';
import { exampleQueries } from '../../src/cli/query.js';
import { readFileSync } from 'node:fs';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, useTempDbPath } from '../support/store.js';

const dbPath = useTempDbPath();
const DAY = 24;

describe('the growth benchmark history', () => {
  it('fills earlier days with the source day shifted by whole days, covered as complete and marked for the copy', async () => {
    const store = await openStore({ path: dbPath() });
    // Day 3 (2025-01-04) collected: p1, p2, hourly, values varying by hour.
    await load(
      store,
      spec({ windowStart: at(3 * DAY), windowEnd: at(4 * DAY) }),
      hourlyRows({
        programs: ['p1', 'p2'],
        fromHour: 3 * DAY,
        toHour: 4 * DAY,
        value: (p, h) => BigInt(h % DAY) * 10n + BigInt(p.length),
      }),
    );
    await store.close();

    await fillHistory(dbPath(), 'hourly', at(0).getTime(), at(3 * DAY).getTime(), at(3 * DAY).getTime());

    const s = await openStore({ path: dbPath(), readOnly: true });
    try {
      const sql = rawSql(s);
      // Each day holds exactly the source day's rows at the same hours of its own day.
      const days = await sql.query<{ day: string; n: bigint; total: bigint; first: string }>(
        `SELECT strftime(timezone('UTC', timeframe_start), '%Y-%m-%d') AS day, count(*) AS n, sum(value) AS total,
                strftime(min(timezone('UTC', timeframe_start)), '%H:%M') AS first
         FROM usage_program WHERE granularity = 'hourly' GROUP BY 1 ORDER BY 1`,
      );
      expect(days.map((d) => d.day)).toEqual(['2025-01-01', '2025-01-02', '2025-01-03', '2025-01-04']);
      for (const d of days)
        expect({ n: d.n, total: d.total, first: d.first }).toEqual({
          n: days[3]!.n,
          total: days[3]!.total,
          first: '00:00',
        });
      // Row by row: every filled row, moved to the source day, is a source row (as many times as days filled).
      const [shifted] = await sql.query<{ n: bigint }>(
        `SELECT count(*) AS n FROM (
           SELECT program_id, metric, timeframe_start + to_days(CAST(3 - date_diff('day', $d0, timeframe_start) AS INTEGER)) AS t, value
           FROM usage_program WHERE timeframe_start < $d3
           EXCEPT ALL
           SELECT program_id, metric, timeframe_start, value FROM usage_program, range(3) WHERE timeframe_start >= $d3)`,
        { d0: at(0), d3: at(3 * DAY) },
      );
      expect(shifted!.n).toBe(0n);
      // Covered as complete from the first filled day on, so a planner sees no gap.
      const cover = await sql.query<{ s: Date; e: Date; status: string }>(
        `SELECT min(window_start) AS s, max(window_end) AS e, any_value(status) AS status FROM coverage
         WHERE granularity = 'hourly' AND run_id LIKE 'history-%'`,
      );
      expect(cover).toEqual([{ s: at(0), e: at(3 * DAY), status: 'complete' }]);
      // The kept summary per scope (migration 021) sees those windows too: status and the planner read it.
      expect((await s.coverage.summary()).map((c) => [c.firstCompleteStart, c.completeWindows])).toEqual([[at(0), 2]]);
      const [dirty] = await sql.query<{ parts: string }>(
        `SELECT string_agg(DISTINCT part, ',' ORDER BY part) AS parts FROM analyst_dirty WHERE table_name = 'usage_program_buckets' AND part <> '*'`,
      );
      expect(dirty!.parts).toBe('hourly/2025-01-01,hourly/2025-01-02,hourly/2025-01-03,hourly/2025-01-04');
    } finally {
      await s.close();
    }
  });
});

describe('the growth benchmark JSON', () => {
  const op = (name: string, wallS: number) => ({
    op: name,
    wallS,
    cpuS: wallS,
    writtenBytes: 1e6,
    peakRssMb: 100,
    detail: {},
  });
  const step = (days: number, wallS: number) => ({
    days,
    dbBytes: days,
    copyBytes: 0,
    datasetBytes: 0,
    collectedBytes: 2e6,
    clock: 0,
    ops: Object.fromEntries(
      (['collect', 'status', 'query', 'export', 'report'] as const).map((o) => [o, [op(o, wallS), op(o, wallS * 3)]]),
    ) as GrowthStep['ops'],
  });

  it('gives the last step over the first, and the slowest example on the copy over the database', () => {
    const last = {
      ...step(365, 3),
      examples: [
        { name: 'a', copyMs: 30, dbMs: 20, copyFirstMs: 300, dbFirstMs: 250 },
        { name: 'b', copyMs: 10, dbMs: 40, copyFirstMs: 100, dbFirstMs: 400 },
        // stopped at the cap on one side: no ratio to compare
        { name: 'c', copyMs: null, dbMs: 1, copyFirstMs: null, dbFirstMs: 1 },
        { name: 'd', copyMs: 90, dbMs: null, copyFirstMs: 900, dbFirstMs: null },
      ],
    };
    const j = growthJson([step(7, 2), last]);
    expect(j).toMatchObject({ history_months: 12, growth_hourly_run: 1.5, growth_report: 1.5 });
    expect(j.written_per_collected_byte).toBe(0.5);
    expect(j.examples_copy_over_db).toBe(1.5);
    expect(j.examples_first_copy_over_db).toBe(1.2);
    expect(growthJson([step(7, 2), step(30, 2)]).examples_copy_over_db).toBeNull();
  });

  it('gives the last step over the first step measured beside it, when it was', () => {
    // The machine slowed between the steps: the first step alone took 2 s, beside the last 2.5 s.
    const last = { ...step(365, 3), paired: step(7, 2.5).ops };
    const j = growthJson([step(7, 2), last]);
    expect(j).toMatchObject({ paired: true, growth_hourly_run: 1.2, growth_status: 1.2, growth_hourly_run_written: 1 });
    expect(j.growth_cpu).toEqual({ collect: 1.2, status: 1.2, query: 1.2, export: 1.2, report: 1.2 });
    expect(growthJson([step(7, 2), step(365, 3)])).toMatchObject({ paired: false, growth_hourly_run: 1.5 });
  });

  it("takes the median of the rounds, of each round's ratio when paired: one slow round does not move it", () => {
    const rounds = (days: number, walls: number[]) => ({
      ...step(days, 1),
      ops: Object.fromEntries(
        (['collect', 'status', 'query', 'export', 'report'] as const).map((o) => [o, walls.map((w) => op(o, w))]),
      ) as GrowthStep['ops'],
    });
    // Round 2 ran on a loaded machine, both sides slow; round 3 only the step's side. Two rounds in three
    // give 1.1 (the medians' ratio would be 2, the means' 1.21).
    const last = { ...rounds(365, [1.1, 6.6, 2]), paired: rounds(7, [1, 6, 1]).ops };
    expect(growthJson([rounds(7, [1, 1, 1]), last])).toMatchObject({ growth_hourly_run: 1.1, growth_export: 1.1 });
    // Unpaired: the median of each side's rounds (1.32 over 1).
    expect(growthJson([rounds(7, [1, 9, 1]), rounds(365, [1.1, 6.6, 1.32])]).growth_hourly_run).toBe(1.32);
  });
});

describe("the growth benchmark's examples", () => {
  it("run at the bench's clock: now() in every shipped example is that instant, and each still plans", async () => {
    const store = await openStore({ path: dbPath() });
    try {
      const now = Date.UTC(2026, 10, 8, 19);
      for (const e of exampleQueries()) {
        const text = readFileSync(e.file, 'utf8');
        const sql = atClock(text, now);
        expect(sql).not.toMatch(/now\(\)/);
        expect(sql.split("TIMESTAMPTZ '2026-11-08T19:00:00.000Z'").length - 1).toBe(text.split('now()').length - 1);
        await rawSql(store).query(`EXPLAIN ${sql.replace(/;\s*$/, '')}`);
      }
      const [r] = await rawSql(store).query<{ d: string }>(
        `SELECT strftime(${atClock("date_trunc('day', now())", now)}, '%Y-%m-%d') AS d`,
      );
      expect(r!.d).toBe('2026-11-08');
    } finally {
      await store.close();
    }
  });
});
