// Calendar arithmetic on instants (epoch milliseconds): month and day boundaries and the billing month,
// in UTC by default or in a named IANA time zone (the daemon's schedule.timezone). date-fns does the
// calendar work on a date that lives in the zone, so DST changes and month lengths are its problem;
// these run per month, per day or per job, never per value (bucket arithmetic stays in granularity.ts).
// Each function is imported from its own path and the dates are the "mini" ones (no formatting): the
// package index loads some 300 modules, which every command would pay for at start-up.
import { addDays } from 'date-fns/addDays';
import { addMonths } from 'date-fns/addMonths';
import { startOfDay } from 'date-fns/startOfDay';
import { startOfMonth } from 'date-fns/startOfMonth';
import { subMonths } from 'date-fns/subMonths';
import { TZDateMini } from '@date-fns/tz/date/mini';
import { UTCDateMini } from '@date-fns/utc/date/mini';

/** The default zone: billing months, report periods and the API's buckets are UTC. */
export const UTC = 'UTC';

/** A calendar month, YYYY-MM. */
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

function zoned(ms: number, timeZone: string): Date {
  return timeZone === UTC ? new UTCDateMini(ms) : new TZDateMini(ms, timeZone);
}

/** YYYY-MM of a date, read in its own zone. */
function yearMonth(d: Date): string {
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}`;
}

/** The calendar date at `ms` in `timeZone` (month 1-12). */
export function localDate(ms: number, timeZone: string = UTC): { year: number; month: number; day: number } {
  const d = zoned(ms, timeZone);
  return { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate() };
}

/** The calendar month `ms` falls in (in `timeZone`), as YYYY-MM. */
export function monthOf(ms: number, timeZone: string = UTC): string {
  return yearMonth(zoned(ms, timeZone));
}

/** The billing month before the one `ms` falls in (in `timeZone`), as YYYY-MM. */
export function previousMonth(ms: number, timeZone: string = UTC): string {
  return yearMonth(subMonths(startOfMonth(zoned(ms, timeZone)), 1));
}

/** The first instant of the month `ms` falls in (in `timeZone`). */
export function startOfMonthAt(ms: number, timeZone: string = UTC): number {
  return startOfMonth(zoned(ms, timeZone)).getTime();
}

/** The first instant of the month after the one `ms` falls in (in `timeZone`). */
export function startOfNextMonthAt(ms: number, timeZone: string = UTC): number {
  return addMonths(startOfMonth(zoned(ms, timeZone)), 1).getTime();
}

/** The first instant of the day `ms` falls in (in `timeZone`). */
export function startOfDayAt(ms: number, timeZone: string = UTC): number {
  return startOfDay(zoned(ms, timeZone)).getTime();
}

/** The first instant of the day after the one `ms` falls in (in `timeZone`): 23 or 25 hours on a DST change. */
export function startOfNextDayAt(ms: number, timeZone: string = UTC): number {
  return addDays(startOfDay(zoned(ms, timeZone)), 1).getTime();
}

/** Whether `a` and `b` fall on the same calendar day in `timeZone`. */
export function sameDay(a: number, b: number, timeZone: string = UTC): boolean {
  return startOfDayAt(a, timeZone) === startOfDayAt(b, timeZone);
}

/** Whether `s` is a calendar month, YYYY-MM. */
export function isMonth(s: string): boolean {
  return MONTH.test(s);
}

/** The instants [start, end) of the month YYYY-MM in `timeZone`; throws on anything else. */
export function monthRange(month: string, timeZone: string = UTC): { start: number; end: number } {
  const m = MONTH.exec(month);
  if (!m) throw new RangeError(`"${month}" is not a month (YYYY-MM)`);
  const start =
    timeZone === UTC
      ? new UTCDateMini(Number(m[1]), Number(m[2]) - 1, 1)
      : new TZDateMini(Number(m[1]), Number(m[2]) - 1, 1, timeZone);
  return { start: start.getTime(), end: addMonths(start, 1).getTime() };
}
