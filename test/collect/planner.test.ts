import { describe, expect, it } from 'vitest';
import { earliestAllowedFrom } from '../../src/contract/api.js';
import { floorToGranularity, GRANULARITIES } from '../../src/domain/granularity.js';
import { parseIsoFlag, planWindow, plannedEarliest } from '../../src/collect/planner.js';
import { UsageError } from '../../src/domain/errors.js';

const settle = { hourly_hours: 6, daily_days: 2, monthly_months: 1 };
const now = Date.parse('2026-11-21T19:42:10Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('planWindow', () => {
  it('backfills the whole look-back, aligned, never before the allowed start, and only complete buckets', () => {
    for (const g of GRANULARITIES) {
      const w = planWindow({ now, granularity: g, heldEnd: null, settle })!;
      expect(w.reason).toBe('backfill');
      expect(floorToGranularity(w.from, g)).toBe(w.from);
      expect(floorToGranularity(w.to, g)).toBe(w.to);
      expect(w.from).toBeGreaterThanOrEqual(earliestAllowedFrom(now, g));
      // still allowed a quarter of an hour later, when the requests actually go out
      expect(w.from).toBeGreaterThanOrEqual(earliestAllowedFrom(now + 14 * 60_000, g));
      expect(w.to).toBeLessThanOrEqual(now);
      expect(w.partial).toBe(false);
    }
    expect(iso(planWindow({ now, granularity: 'hourly', heldEnd: null, settle })!.to)).toBe('2026-11-21T19:00:00.000Z');
    expect(iso(planWindow({ now, granularity: 'daily', heldEnd: null, settle })!.to)).toBe('2026-11-21T00:00:00.000Z');
    expect(iso(planWindow({ now, granularity: 'monthly', heldEnd: null, settle })!.to)).toBe(
      '2026-11-01T00:00:00.000Z',
    );
    expect(iso(planWindow({ now, granularity: 'daily', heldEnd: null, settle })!.from)).toBe(
      '2026-09-23T00:00:00.000Z',
    );
  });

  it('collects incrementally from what is held, re-collecting the settle window', () => {
    const held = Date.parse('2026-11-21T12:00:00Z');
    const w = planWindow({ now, granularity: 'hourly', heldEnd: held, settle })!;
    expect(w.reason).toBe('incremental');
    expect(iso(w.from)).toBe('2026-11-21T06:00:00.000Z');
    const m = planWindow({ now, granularity: 'monthly', heldEnd: Date.parse('2026-11-01T00:00:00Z'), settle })!;
    expect(iso(m.from)).toBe('2026-10-01T00:00:00.000Z');
    const d = planWindow({ now, granularity: 'daily', heldEnd: Date.parse('2026-11-21T00:00:00Z'), settle })!;
    expect(iso(d.from)).toBe('2026-11-19T00:00:00.000Z');
  });

  it('never reaches behind the look-back even when what is held is very old', () => {
    const w = planWindow({ now, granularity: 'hourly', heldEnd: Date.parse('2025-01-01T00:00:00Z'), settle })!;
    expect(w.from).toBe(plannedEarliest(now, 'hourly'));
  });

  it('includes the bucket in progress only when asked', () => {
    const w = planWindow({ now, granularity: 'hourly', heldEnd: null, settle, includePartial: true })!;
    expect(iso(w.to)).toBe('2026-11-21T20:00:00.000Z');
    expect(w.partial).toBe(true);
  });

  it('refuses an explicit range behind the look-back with a message that says what is allowed', () => {
    expect(() =>
      planWindow({ now, granularity: 'hourly', heldEnd: null, settle, from: Date.parse('2026-10-01T00:00:00Z') }),
    ).toThrow(UsageError);
    expect(() =>
      planWindow({ now, granularity: 'hourly', heldEnd: null, settle, from: Date.parse('2026-10-01T00:00:00Z') }),
    ).toThrow(/earliest hourly start/);
    const w = planWindow({
      now,
      granularity: 'monthly',
      heldEnd: null,
      settle,
      from: Date.parse('2026-01-15T00:00:00Z'),
      to: Date.parse('2026-03-01T00:00:00Z'),
    })!;
    expect([iso(w.from), iso(w.to), w.reason]).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
      'explicit',
    ]);
  });

  it('never plans before 2024-03-01', () => {
    const early = Date.parse('2024-06-10T00:00:00Z');
    expect(iso(planWindow({ now: early, granularity: 'monthly', heldEnd: null, settle })!.from)).toBe(
      '2024-03-01T00:00:00.000Z',
    );
  });
});

describe('parseIsoFlag', () => {
  it('takes dates and date-times with a zone, refuses the rest', () => {
    expect(parseIsoFlag('--from', '2026-10-01')).toBe(Date.parse('2026-10-01T00:00:00Z'));
    expect(parseIsoFlag('--from', '2026-10-01T05:00:00+02:00')).toBe(Date.parse('2026-10-01T03:00:00Z'));
    for (const bad of ['yesterday', '2026-13-01', '2026-02-30', '2026-10-01T05:00:00', '']) {
      expect(() => parseIsoFlag('--from', bad)).toThrow(UsageError);
    }
  });
});
