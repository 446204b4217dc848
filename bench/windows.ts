// The benchmark's windows, derived from the pinned clock: complete buckets only, aligned to their
// granularity, and the billing month the report covers.
import { monthRange, previousMonth } from '../src/domain/calendar.js';
import { floorToGranularity } from '../src/domain/granularity.js';
import type { BenchWindow } from './minimum.js';

const HOUR = 3_600_000;
const DAY = 86_400_000;

export interface BenchPlan {
  daily: BenchWindow;
  hourly: BenchWindow;
  /** The month the report covers (YYYY-MM). */
  month: string;
  /** How the month's data gets there: the daily window already covers it, or one monthly collection. */
  monthWindow: BenchWindow | null;
}

/** `days` whole days and `hours` whole hours ending at the last complete bucket before `now`. */
export function benchPlan(now: number, days: number, hours: number): BenchPlan {
  const dayEnd = floorToGranularity(now, 'daily');
  const hourEnd = floorToGranularity(now, 'hourly');
  const daily: BenchWindow = { granularity: 'daily', from: iso(dayEnd - days * DAY), to: iso(dayEnd) };
  const hourly: BenchWindow = { granularity: 'hourly', from: iso(hourEnd - hours * HOUR), to: iso(hourEnd) };
  // The last month that is complete at `now`: the daily window may already cover it whole.
  const month = previousMonth(dayEnd);
  const { start: monthStart, end: monthEnd } = monthRange(month);
  const covered = Date.parse(daily.from) <= monthStart && monthEnd <= dayEnd;
  const monthWindow: BenchWindow | null = covered
    ? null
    : { granularity: 'monthly', from: iso(monthStart), to: iso(monthEnd) };
  return { daily, hourly, month, monthWindow };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
