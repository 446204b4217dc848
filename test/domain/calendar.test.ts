import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isMonth,
  localDate,
  monthOf,
  monthRange,
  previousMonth,
  sameDay,
  startOfDayAt,
  startOfMonthAt,
  startOfNextDayAt,
  startOfNextMonthAt,
} from '../../src/domain/calendar.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

// The host's own zone must not leak into the answers: run them under one far from UTC and the zones asked for.
const hostZone = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Asia/Kolkata';
});
afterAll(() => {
  if (hostZone === undefined) delete process.env.TZ;
  else process.env.TZ = hostZone;
});

describe('the previous month', () => {
  it('is UTC by default, across the turn of the year', () => {
    expect(previousMonth(at('2025-03-05T10:00:00Z'))).toBe('2025-02');
    expect(previousMonth(at('2025-01-01T00:00:00Z'))).toBe('2024-12');
    expect(previousMonth(at('2024-12-31T23:59:59.999Z'))).toBe('2024-11');
  });

  it('from the last days of a month, not a day that February lacks', () => {
    expect(previousMonth(at('2024-03-31T12:00:00Z'))).toBe('2024-02');
    expect(previousMonth(at('2025-03-31T12:00:00Z'))).toBe('2025-02');
    expect(previousMonth(at('2025-05-31T12:00:00Z'))).toBe('2025-04');
  });

  it('follows the zone it is given at the edge of a month', () => {
    // 23:30 UTC on the 31st of December is already January in Berlin.
    expect(previousMonth(at('2024-12-31T23:30:00Z'), 'Europe/Berlin')).toBe('2024-12');
    expect(previousMonth(at('2024-12-31T23:30:00Z'), 'UTC')).toBe('2024-11');
    // 02:00 UTC on the 1st of March is still the 28th of February in New York.
    expect(localDate(at('2025-03-01T02:00:00Z'), 'America/New_York')).toEqual({ year: 2025, month: 2, day: 28 });
    expect(previousMonth(at('2025-03-01T02:00:00Z'), 'America/New_York')).toBe('2025-01');
    expect(monthOf(at('2025-01-31T23:30:00Z'), 'Europe/Berlin')).toBe('2025-02');
    expect(monthOf(at('2025-01-31T23:30:00Z'))).toBe('2025-01');
  });
});

describe('month boundaries', () => {
  it('a leap February has 29 days, a common one 28', () => {
    const leap = monthRange('2024-02');
    expect([iso(leap.start), iso(leap.end)]).toEqual(['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
    expect((leap.end - leap.start) / (24 * HOUR)).toBe(29);
    const common = monthRange('2025-02');
    expect((common.end - common.start) / (24 * HOUR)).toBe(28);
  });

  it('December runs into the next year', () => {
    const dec = monthRange('2024-12');
    expect([iso(dec.start), iso(dec.end)]).toEqual(['2024-12-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(iso(startOfNextMonthAt(at('2024-12-15T08:00:00Z')))).toBe('2025-01-01T00:00:00.000Z');
  });

  it('a month with a DST change in Berlin is an hour short, and starts at local midnight', () => {
    const march = monthRange('2025-03', 'Europe/Berlin');
    expect([iso(march.start), iso(march.end)]).toEqual(['2025-02-28T23:00:00.000Z', '2025-03-31T22:00:00.000Z']);
    expect(march.end - march.start).toBe(31 * 24 * HOUR - HOUR);
    expect(iso(startOfMonthAt(at('2025-03-20T12:00:00Z'), 'Europe/Berlin'))).toBe('2025-02-28T23:00:00.000Z');
    expect(iso(startOfNextMonthAt(at('2025-03-20T12:00:00Z'), 'Europe/Berlin'))).toBe('2025-03-31T22:00:00.000Z');
  });

  it('a month with a DST change in New York is an hour long in November', () => {
    const november = monthRange('2024-11', 'America/New_York');
    expect([iso(november.start), iso(november.end)]).toEqual(['2024-11-01T04:00:00.000Z', '2024-12-01T05:00:00.000Z']);
    expect(november.end - november.start).toBe(30 * 24 * HOUR + HOUR);
  });

  it('refuses what is not a month', () => {
    for (const bad of ['2024-13', '2024-00', '2024-1', '24-01', '2024-01-01']) {
      expect(isMonth(bad), bad).toBe(false);
      expect(() => monthRange(bad), bad).toThrow(RangeError);
    }
    expect(isMonth('2024-01')).toBe(true);
  });
});

describe('day boundaries', () => {
  it('the spring-forward day is 23 hours, the fall-back day 25', () => {
    const spring = startOfDayAt(at('2025-03-30T12:00:00Z'), 'Europe/Berlin');
    expect(iso(spring)).toBe('2025-03-29T23:00:00.000Z');
    expect(startOfNextDayAt(spring, 'Europe/Berlin') - spring).toBe(23 * HOUR);
    const fall = startOfDayAt(at('2025-10-26T12:00:00Z'), 'Europe/Berlin');
    expect(iso(fall)).toBe('2025-10-25T22:00:00.000Z');
    expect(startOfNextDayAt(fall, 'Europe/Berlin') - fall).toBe(25 * HOUR);
    const ny = startOfDayAt(at('2025-03-09T12:00:00Z'), 'America/New_York');
    expect(iso(ny)).toBe('2025-03-09T05:00:00.000Z');
    expect(startOfNextDayAt(ny, 'America/New_York') - ny).toBe(23 * HOUR);
  });

  it('UTC days are whole days of 24 hours by default', () => {
    expect(iso(startOfDayAt(at('2024-02-29T23:59:59Z')))).toBe('2024-02-29T00:00:00.000Z');
    expect(iso(startOfNextDayAt(at('2024-02-29T23:59:59Z')))).toBe('2024-03-01T00:00:00.000Z');
  });

  it('the same day depends on the zone', () => {
    // 23:30 and 00:30 UTC are two UTC days but one day in New York (18:30 and 19:30 of the same evening).
    expect(sameDay(at('2025-03-01T23:30:00Z'), at('2025-03-02T00:30:00Z'))).toBe(false);
    expect(sameDay(at('2025-03-01T23:30:00Z'), at('2025-03-02T00:30:00Z'), 'America/New_York')).toBe(true);
  });
});
