// The month-end forecast: month-to-date spend per program and a projection of the month's total from
// the recent daily trend. Exact cents throughout (bigint): the projection is a plain, stated rule so
// finance can redo it by hand, and for a finished month it is the actual total, to the cent.
import { divHalfUp, formatScaled } from '../billing/money.js';

const DAY_MS = 86_400_000;
/** Complete days whose mean is the daily trend. */
export const FORECAST_WINDOW_DAYS = 7;

export interface DailyProgramSpend {
  program_id: string;
  program_name: string;
  /** The UTC day. */
  day: Date;
  /** Decimal string, 2 decimals. */
  cost: string;
}

export interface ProgramForecast {
  programId: string;
  programName: string;
  /** Everything collected so far in the period, including a day still in progress. */
  monthToDate: string;
  /** Spend over the complete days only (the base the projection extends). */
  completeDaysSpend: string;
  /** Mean daily spend over the trend window (4 decimals; the projection uses the exact fraction). */
  dailyTrend: string;
  /** Projected total for the period; null when no day is complete yet. */
  projection: string | null;
}

export interface Forecast {
  /** The period contains the report time: a month in progress. */
  current: boolean;
  asOf: string;
  /** Complete days end here (UTC midnight): the earlier of the report time and the collected data. */
  completeThrough: string;
  daysInPeriod: number;
  completeDays: number;
  remainingDays: number;
  windowDays: number;
  currency: string;
  programs: ProgramForecast[];
  totals: { monthToDate: string; completeDaysSpend: string; projection: string | null };
  method: string;
}

const cents = (s: string): bigint => {
  const neg = s.startsWith('-');
  const [i, f = ''] = (neg ? s.slice(1) : s).split('.');
  const v = BigInt(i! + f.padEnd(2, '0').slice(0, 2));
  return neg ? -v : v;
};
const money = (c: bigint) => formatScaled(c, 2);

/**
 * The days a forecast distinguishes (UTC midnights, ms): complete days end at `cutoff`, the trend
 * window starts at `windowStart`. A program's spend matters to computeForecast only as its sums
 * before the window, inside it and after the cutoff, so those three sums per program (in SQL) are
 * all it needs to be given.
 */
export function forecastDays(o: { rangeStart: Date; rangeEnd: Date; now: Date; dataEnd: Date | null }): {
  cutoff: number;
  windowStart: number;
  daysInPeriod: number;
  completeDays: number;
  remainingDays: number;
  windowDays: number;
} {
  const start = o.rangeStart.getTime();
  const end = o.rangeEnd.getTime();
  const floorDay = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
  const cutoff = Math.max(start, floorDay(Math.min(o.now.getTime(), o.dataEnd?.getTime() ?? start, end)));
  const daysInPeriod = Math.ceil((end - start) / DAY_MS);
  const completeDays = Math.round((cutoff - start) / DAY_MS);
  const remainingDays = daysInPeriod - completeDays;
  const windowDays = Math.min(FORECAST_WINDOW_DAYS, completeDays);
  return { cutoff, windowStart: cutoff - windowDays * DAY_MS, daysInPeriod, completeDays, remainingDays, windowDays };
}

/**
 * Projects a period's spend: for each program, spend over the complete days so far plus the mean of
 * its last FORECAST_WINDOW_DAYS complete days times the days remaining. `dataEnd` is the end of the
 * latest collected bucket (null: nothing collected).
 */
export function computeForecast(o: {
  rangeStart: Date;
  rangeEnd: Date;
  now: Date;
  dataEnd: Date | null;
  currency: string;
  daily: DailyProgramSpend[];
}): Forecast {
  const start = o.rangeStart.getTime();
  const end = o.rangeEnd.getTime();
  const { cutoff, windowStart, daysInPeriod, completeDays, remainingDays, windowDays } = forecastDays(o);

  const by = new Map<string, { name: string; mtd: bigint; complete: bigint; window: bigint }>();
  for (const r of o.daily) {
    const p = by.get(r.program_id) ?? { name: r.program_name, mtd: 0n, complete: 0n, window: 0n };
    const c = cents(r.cost);
    const t = r.day.getTime();
    p.mtd += c;
    if (t < cutoff) p.complete += c;
    if (t < cutoff && t >= windowStart) p.window += c;
    by.set(r.program_id, p);
  }
  const programs: ProgramForecast[] = [...by.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([id, p]) => {
      const projected =
        windowDays === 0 ? null : p.complete + divHalfUp(p.window * BigInt(remainingDays), BigInt(windowDays));
      return {
        programId: id,
        programName: p.name,
        monthToDate: money(p.mtd),
        completeDaysSpend: money(p.complete),
        dailyTrend: windowDays === 0 ? '0.0000' : formatScaled(divHalfUp(p.window * 100n, BigInt(windowDays)), 4),
        projection: projected === null ? null : money(projected),
      };
    });
  const sum = (f: (p: ProgramForecast) => string | null) => programs.reduce((a, p) => a + cents(f(p) ?? '0'), 0n);
  const current = o.now.getTime() >= start && o.now.getTime() < end;
  const method =
    `Projection, not a bill. For each program: spend over the ${completeDays} complete day(s) so far ` +
    `+ the mean daily spend of its last ${windowDays} complete day(s) x the ${remainingDays} day(s) remaining in the period; ` +
    "rounded half-up to cents; the total is the sum of the programs' projections. A complete day is a UTC day that ended " +
    'before the report time and is covered by the collected data. It assumes the recent daily rate continues: included ' +
    'allowances already used stay used, and plan or price changes ahead are not anticipated. ' +
    (remainingDays === 0 ? 'The period is over, so the projection is the actual total.' : '');
  return {
    current,
    asOf: o.now.toISOString(),
    completeThrough: new Date(cutoff).toISOString(),
    daysInPeriod,
    completeDays,
    remainingDays,
    windowDays,
    currency: o.currency,
    programs,
    totals: {
      monthToDate: money(sum((p) => p.monthToDate)),
      completeDaysSpend: money(sum((p) => p.completeDaysSpend)),
      projection: windowDays === 0 ? null : money(sum((p) => p.projection)),
    },
    method: method.trim(),
  };
}
