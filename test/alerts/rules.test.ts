// The alert rules by hand: the anomaly decision, contributions that add up to the cent, and the day a
// FORECASTED budget's projection crosses its threshold.
import { describe, expect, test } from 'vitest';
import {
  allocate,
  CATEGORIES,
  contributions,
  decideAnomaly,
  decideBudget,
  forecastCrossingDay,
  madCents,
  medianCents,
  type AnomalySettings,
  type Category,
} from '../../src/alerts/rules.js';

const RULE: AnomalySettings = {
  minExcessCents: 1000n,
  minRatio: 1.5,
  minScore: 4,
  baselineDays: 28,
  minBaselineDays: 14,
};
const D = (s: string) => Date.parse(`${s}T00:00:00Z`);

describe('anomaly rule', () => {
  test('median (half-up on an even count) and MAD', () => {
    expect(medianCents([3n, 1n, 2n])).toBe(2n);
    expect(medianCents([1n, 2n])).toBe(2n); // 1.5 cents, half-up
    expect(madCents([1000n, 1100n, 900n, 1000n, 1300n], 1000n)).toBe(100n);
  });

  test('a day 3x its baseline with USD 20 of excess fires; 1.4x or under USD 10 does not', () => {
    const baseline = Array.from({ length: 28 }, (_, i) => 1000n + BigInt((i % 5) * 20));
    const hit = decideAnomaly(3040n, baseline, RULE);
    expect(hit?.kind).toBe('anomaly');
    expect(hit?.expected).toBe(1040n);
    expect(hit?.impact).toBe(2000n);
    expect(decideAnomaly(1456n, baseline, RULE)).toBeNull(); // 1.4x
    const small = baseline.map((v) => v / 10n);
    expect(decideAnomaly(small[0]! * 5n, small, RULE)).toBeNull(); // 5x but under USD 10 of excess
  });

  test('too little baseline: new spend once the day reaches USD 10, not again after', () => {
    expect(decideAnomaly(1200n, [0n, 0n, 300n], RULE)?.kind).toBe('new_spend');
    expect(decideAnomaly(1200n, [0n, 1100n, 300n], RULE)).toBeNull();
    expect(decideAnomaly(900n, [0n], RULE)).toBeNull();
  });
});

describe('contributions add up to the impact, to the cent', () => {
  test('allocate: largest remainder, exact sum', () => {
    const parts = allocate(100n, [
      ['a', 1n],
      ['b', 1n],
      ['c', 1n],
    ]);
    expect([...parts.values()]).toEqual([34n, 33n, 33n]);
    expect(
      allocate(-7n, [
        ['a', 2n],
        ['b', 1n],
      ]).get('a')! +
        allocate(-7n, [
          ['a', 2n],
          ['b', 1n],
        ]).get('b')!,
    ).toBe(-7n);
  });

  test('over many uneven splits the per-metric contributions sum to actual - expected exactly', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    for (let k = 0; k < 500; k++) {
      const actual = new Map<Category, bigint>(CATEGORIES.map((c) => [c, BigInt(rnd(50_000))]));
      const medians = new Map<Category, bigint>(CATEGORIES.map((c) => [c, BigInt(rnd(3) === 0 ? 0 : rnd(20_000))]));
      const expected = BigInt(rnd(60_000));
      const parts = contributions(expected, actual, medians);
      const total = [...actual.values()].reduce((a, b) => a + b, 0n);
      expect([...parts.values()].reduce((a, b) => a + b, 0n)).toBe(total - expected);
    }
  });
});

describe('budgets', () => {
  // November 2026 (30 days); 10 complete days (to 2026-11-11); USD 600 spent over them, USD 420 in the
  // last 7, so the trend is USD 60 a day and the projection 600 + 60 x 20 = USD 1,800.
  const inputs = {
    budgetCents: 200_000n,
    thresholdsPct: [50, 80, 100],
    monthToDate: 62_000n,
    days: [
      ...Array.from({ length: 10 }, (_, i) => [D('2026-11-01') + i * 86_400_000, 6_000n] as [number, bigint]),
      [D('2026-11-11'), 2_000n] as [number, bigint],
    ],
    completeDaysSpend: 60_000n,
    windowSpend: 42_000n,
    windowDays: 7,
    remainingDays: 20,
    cutoff: D('2026-11-11'),
  };

  test('FORECASTED at 80% (USD 1,600) names 2026-11-27: 1,000 short at 60 a day is 16.7, so the 17th day from the 11th', () => {
    // By hand: day k after the cutoff ends at 600 + 60k; 600 + 60 x 16 = 1,560 < 1,600 <= 600 + 60 x 17 = 1,620;
    // day 1 is 2026-11-11, so day 17 is 2026-11-27.
    expect(forecastCrossingDay(160_000n, inputs)).toBe(D('2026-11-27'));
    const fired = decideBudget(inputs);
    expect(
      fired.map((f) => [f.kind, f.thresholdPct, f.day === null ? null : new Date(f.day).toISOString().slice(0, 10)]),
    ).toEqual([
      ['budget_forecast', 50, '2026-11-17'], // 1,000 - 600 = 400 at 60 a day: 6.7, the 7th day
      ['budget_forecast', 80, '2026-11-27'],
    ]);
    expect(fired[0]!.projection).toBe(180_000n);
  });

  test('ACTUAL names the day month-to-date reached the threshold', () => {
    const fired = decideBudget({ ...inputs, budgetCents: 100_000n, thresholdsPct: [50] });
    expect(fired).toHaveLength(1);
    expect(fired[0]!.kind).toBe('budget_actual');
    expect(new Date(fired[0]!.day!).toISOString().slice(0, 10)).toBe('2026-11-09'); // 9 x 60 = 540 >= 500
  });
});
