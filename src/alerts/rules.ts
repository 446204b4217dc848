// The alert rules, pure: exact cents (bigint) in, decisions and their numbers out. The store reads the
// inputs (store/alerts.ts) and evaluate.ts applies these, so every alert can be redone by hand from the
// stored usage and prices.
import { divHalfUp } from '../billing/money.js';

export const ANOMALY_RULE = 'anomaly-mad';
export const ANOMALY_RULE_VERSION = 1;
export const BUDGET_RULE = 'budget-threshold';
export const BUDGET_RULE_VERSION = 1;

/** The categories an anomaly's impact is split into (README, "Alerts"). */
export const CATEGORIES = [
  'compute',
  'storage',
  'instant_restore',
  'snapshots',
  'transfer',
  'extra_branches',
  'other',
] as const;
export type Category = (typeof CATEGORIES)[number];

const METRIC_CATEGORY: Record<string, Category> = {
  compute_unit_seconds: 'compute',
  active_time_seconds: 'compute',
  compute_time_seconds: 'compute',
  root_branch_bytes_month: 'storage',
  child_branch_bytes_month: 'storage',
  written_data_bytes: 'storage',
  data_storage_bytes_hour: 'storage',
  logical_size_bytes_hour: 'storage',
  synthetic_storage_size_bytes: 'storage',
  logical_size_bytes: 'storage',
  instant_restore_bytes_month: 'instant_restore',
  snapshot_storage_bytes_month: 'snapshots',
  public_network_transfer_bytes: 'transfer',
  private_network_transfer_bytes: 'transfer',
  extra_branches_month: 'extra_branches',
};

export function categoryOf(metric: string): Category {
  return METRIC_CATEGORY[metric] ?? 'other';
}

export interface AnomalySettings {
  minExcessCents: bigint;
  minRatio: number;
  minScore: number;
  baselineDays: number;
  minBaselineDays: number;
}

/** The median in cents, half-up when the count is even (the mean of the two middle values). */
export function medianCents(values: readonly bigint[]): bigint {
  if (values.length === 0) return 0n;
  const s = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : divHalfUp(s[mid - 1]! + s[mid]!, 2n);
}

/** The median absolute deviation from `median`, in cents. */
export function madCents(values: readonly bigint[], median: bigint): bigint {
  return medianCents(values.map((v) => (v > median ? v - median : median - v)));
}

/** MAD x 1.4826 estimates a standard deviation; the spread is floored at one cent so a flat baseline still scores. */
export function robustScore(excess: bigint, mad: bigint): number {
  const spread = Math.max(1.4826 * Number(mad), 1);
  return Number(excess) / spread;
}

export type AnomalyDecision =
  | {
      kind: 'anomaly';
      expected: bigint;
      actual: bigint;
      impact: bigint;
      score: number;
      mad: bigint;
      baselineDays: number;
    }
  | { kind: 'new_spend'; expected: 0n; actual: bigint; impact: bigint; score: null; mad: null; baselineDays: number }
  | null;

/**
 * One program's day against its baseline: `baseline` holds the spend of each previous complete day the
 * program existed in (up to settings.baselineDays of them, zeros included), oldest first.
 * An anomaly: at least minBaselineDays of baseline, excess >= minExcess, actual >= minRatio x median and
 * excess / (1.4826 x MAD) >= minScore. New spend: too little baseline, the day reaches minExcess and no
 * earlier day of the program did.
 */
export function decideAnomaly(actual: bigint, baseline: readonly bigint[], s: AnomalySettings): AnomalyDecision {
  if (baseline.length < s.minBaselineDays) {
    if (actual < s.minExcessCents || baseline.some((v) => v >= s.minExcessCents)) return null;
    return {
      kind: 'new_spend',
      expected: 0n,
      actual,
      impact: actual,
      score: null,
      mad: null,
      baselineDays: baseline.length,
    };
  }
  const expected = medianCents(baseline);
  const excess = actual - expected;
  if (excess < s.minExcessCents) return null;
  if (Number(actual) < s.minRatio * Number(expected)) return null;
  const mad = madCents(baseline, expected);
  const score = robustScore(excess, mad);
  if (score < s.minScore) return null;
  return { kind: 'anomaly', expected, actual, impact: excess, score, mad, baselineDays: baseline.length };
}

/**
 * Splits `total` cents over keys in proportion to non-negative `weights`, by largest remainder, so the
 * parts add up to `total` exactly (ties to the earlier key). Zero weights everywhere: all to the first key.
 */
export function allocate<K extends string>(total: bigint, weights: ReadonlyArray<[K, bigint]>): Map<K, bigint> {
  const out = new Map<K, bigint>(weights.map(([k]) => [k, 0n]));
  const sum = weights.reduce((a, [, w]) => a + (w > 0n ? w : 0n), 0n);
  if (weights.length === 0) return out;
  if (sum === 0n) {
    out.set(weights[0]![0], total);
    return out;
  }
  const neg = total < 0n;
  const abs = neg ? -total : total;
  const parts = weights.map(([k, w], i) => {
    const ww = w > 0n ? w : 0n;
    return { k, i, base: (abs * ww) / sum, rem: (abs * ww) % sum };
  });
  let short = abs - parts.reduce((a, p) => a + p.base, 0n);
  for (const p of [...parts].sort((a, b) => (a.rem === b.rem ? a.i - b.i : a.rem > b.rem ? -1 : 1))) {
    if (short <= 0n) break;
    p.base += 1n;
    short -= 1n;
  }
  for (const p of parts) out.set(p.k, neg ? -p.base : p.base);
  return out;
}

/**
 * An anomaly's impact by category: the expected total is shared out over the categories in proportion
 * to each category's own baseline median (largest remainder), and each category's contribution is its
 * actual spend minus its expected share; so the contributions add up to actual - expected, to the cent.
 */
export function contributions(
  expected: bigint,
  actualBy: ReadonlyMap<Category, bigint>,
  baselineMedianBy: ReadonlyMap<Category, bigint>,
): Map<Category, bigint> {
  const expectedBy = allocate(
    expected,
    CATEGORIES.map((c) => [c, baselineMedianBy.get(c) ?? 0n] as [Category, bigint]),
  );
  return new Map(CATEGORIES.map((c) => [c, (actualBy.get(c) ?? 0n) - (expectedBy.get(c) ?? 0n)]));
}

const DAY_MS = 86_400_000;

export interface BudgetInputs {
  budgetCents: bigint;
  thresholdsPct: readonly number[];
  /** Month-to-date spend. */
  monthToDate: bigint;
  /** Spend of each day of the month so far, for the day ACTUAL reached a threshold (UTC midnight ms, cents). */
  days: ReadonlyArray<[number, bigint]>;
  /** The month-end forecast's inputs: spend over the complete days, the trend window's spend and length. */
  completeDaysSpend: bigint;
  windowSpend: bigint;
  windowDays: number;
  remainingDays: number;
  /** UTC midnight where complete days end (the first day the projection extends over). */
  cutoff: number;
}

export interface BudgetFiring {
  kind: 'budget_actual' | 'budget_forecast';
  thresholdPct: number;
  thresholdCents: bigint;
  actual: bigint;
  projection: bigint | null;
  /** ACTUAL: the day spend reached the threshold; FORECASTED: the day the projection does. */
  day: number | null;
}

/** The month-end projection as the reports compute it: complete days + trend x days remaining, half-up. */
export function projection(
  b: Pick<BudgetInputs, 'completeDaysSpend' | 'windowSpend' | 'windowDays' | 'remainingDays'>,
): bigint | null {
  if (b.windowDays === 0) return null;
  return b.completeDaysSpend + divHalfUp(b.windowSpend * BigInt(b.remainingDays), BigInt(b.windowDays));
}

/**
 * The UTC day on which the projection reaches `threshold`: complete-days spend S plus the daily trend
 * r = window / windowDays for each day from the cutoff on; the first k with S + r x k >= T is
 * k = ceil((T - S) x windowDays / window), and the crossing happens during day cutoff + (k - 1).
 * Null when the trend is zero or the crossing falls after the month's last day.
 */
export function forecastCrossingDay(threshold: bigint, b: BudgetInputs): number | null {
  if (b.completeDaysSpend >= threshold) return b.cutoff - DAY_MS;
  if (b.windowSpend <= 0n || b.windowDays === 0) return null;
  const need = (threshold - b.completeDaysSpend) * BigInt(b.windowDays);
  const k = (need + b.windowSpend - 1n) / b.windowSpend;
  if (k > BigInt(b.remainingDays)) return null;
  return b.cutoff + Number(k - 1n) * DAY_MS;
}

/** Which thresholds fire: ACTUAL when month-to-date reaches one, FORECASTED when only the projection does. */
export function decideBudget(b: BudgetInputs): BudgetFiring[] {
  const out: BudgetFiring[] = [];
  const proj = projection(b);
  for (const pct of b.thresholdsPct) {
    const threshold = divHalfUp(b.budgetCents * BigInt(Math.round(pct * 100)), 10_000n);
    if (b.monthToDate >= threshold) {
      let run = 0n;
      let day: number | null = null;
      for (const [d, c] of [...b.days].sort((x, y) => x[0] - y[0])) {
        run += c;
        if (run >= threshold) {
          day = d;
          break;
        }
      }
      out.push({
        kind: 'budget_actual',
        thresholdPct: pct,
        thresholdCents: threshold,
        actual: b.monthToDate,
        projection: proj,
        day,
      });
    } else if (proj !== null && proj >= threshold) {
      out.push({
        kind: 'budget_forecast',
        thresholdPct: pct,
        thresholdCents: threshold,
        actual: b.monthToDate,
        projection: proj,
        day: forecastCrossingDay(threshold, b),
      });
    }
  }
  return out;
}
