// The billing period a report covers: a calendar month (UTC) or an explicit [from, to) range.
import { isMonth, monthRange } from '../domain/calendar.js';

export class ReportInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReportInputError';
  }
}

export interface ReportPeriod {
  /** 'YYYY-MM' for a month, else 'YYYY-MM-DD_YYYY-MM-DD' (to exclusive); also the output folder name. */
  label: string;
  month: string | null;
  rangeStart: Date;
  /** Exclusive. */
  rangeEnd: Date;
}

function parseInstant(s: string, what: string): Date {
  // A bare date means its UTC midnight; anything else must carry its offset (ISO 8601).
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s;
  const ms = Date.parse(iso);
  if (!/^\d{4}-\d{2}-\d{2}(T.*(Z|[+-]\d{2}:?\d{2}))?$/.test(iso) || Number.isNaN(ms))
    throw new ReportInputError(`${what} "${s}" is not a date (YYYY-MM-DD) or an ISO 8601 instant with an offset`);
  return new Date(ms);
}

export function resolvePeriod(o: { month?: string; from?: string; to?: string }): ReportPeriod {
  if (o.month !== undefined) {
    if (o.from !== undefined || o.to !== undefined)
      throw new ReportInputError('give either a month or from/to, not both');
    if (!isMonth(o.month)) throw new ReportInputError(`month "${o.month}" is not YYYY-MM (for example 2025-10)`);
    const { start, end } = monthRange(o.month);
    return { label: o.month, month: o.month, rangeStart: new Date(start), rangeEnd: new Date(end) };
  }
  if (o.from === undefined || o.to === undefined)
    throw new ReportInputError('give a month (YYYY-MM) or both from and to');
  const rangeStart = parseInstant(o.from, 'from');
  const rangeEnd = parseInstant(o.to, 'to');
  if (rangeEnd.getTime() <= rangeStart.getTime())
    throw new ReportInputError(`to (${o.to}) must be after from (${o.from})`);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const wholeDays = rangeStart.getTime() % 86_400_000 === 0 && rangeEnd.getTime() % 86_400_000 === 0;
  const fmt = (d: Date) => (wholeDays ? day(d) : d.toISOString().slice(0, 16).replace(':', ''));
  return { label: `${fmt(rangeStart)}_${fmt(rangeEnd)}`, month: null, rangeStart, rangeEnd };
}
