// Chooses the window to fetch for each granularity: aligned, half-open, inside the API's look-back
// (so no request draws a 406), incremental from what the database holds with a trailing settle window.
import { earliestAllowedFrom, LOOKBACK_MS } from '../contract/api.js';
import { floorToGranularity, nextBucket, type Granularity } from '../domain/granularity.js';
import { UsageError } from '../domain/errors.js';

/** Requests go out some time after planning; plan as if the clock were this much later so `from` stays allowed. */
export const PLANNING_MARGIN_MS = 15 * 60_000;

export interface SettleWindows {
  hourly_hours: number;
  daily_days: number;
  monthly_months: number;
}

export interface PlanInput {
  now: number;
  granularity: Granularity;
  /** End of what the database already holds completely for this granularity, or null. */
  heldEnd: number | null;
  settle: SettleWindows;
  from?: number;
  to?: number;
  includePartial?: boolean;
}

export interface Window {
  granularity: Granularity;
  from: number;
  to: number;
  /** The last bucket is still in progress (only with includePartial). */
  partial: boolean;
  reason: 'backfill' | 'incremental' | 'explicit';
}

export function ceilToGranularity(ms: number, g: Granularity): number {
  const f = floorToGranularity(ms, g);
  return f === ms ? f : nextBucket(f, g);
}

/** The earliest `from` the planner will send for `g` at clock `now`. */
export function plannedEarliest(now: number, g: Granularity): number {
  return ceilToGranularity(earliestAllowedFrom(now + PLANNING_MARGIN_MS, g), g);
}

function settleStart(end: number, g: Granularity, s: SettleWindows): number {
  if (g === 'hourly') return end - s.hourly_hours * 3_600_000;
  if (g === 'daily') return end - s.daily_days * 86_400_000;
  const d = new Date(end);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - s.monthly_months, 1);
}

/** Returns the window to fetch, or null when there is nothing complete to fetch yet. */
export function planWindow(input: PlanInput): Window | null {
  const g = input.granularity;
  const completeEnd = floorToGranularity(input.now, g);
  const end = input.includePartial ? nextBucket(completeEnd, g) : completeEnd;
  const earliest = plannedEarliest(input.now, g);

  if (input.from !== undefined || input.to !== undefined) {
    const from = floorToGranularity(input.from ?? earliest, g);
    const to = Math.min(input.to !== undefined ? ceilToGranularity(input.to, g) : end, end);
    if (from < earliest) {
      throw new UsageError(
        `--from ${new Date(input.from ?? from).toISOString()} is too far back for ${g} data: the API serves ` +
          `${describeLookback(g)}, so the earliest ${g} start now is ${new Date(earliest).toISOString()}. ` +
          `Use a later --from, or --granularity monthly for older months.`,
      );
    }
    if (to <= from) return null;
    return { granularity: g, from, to, partial: !!input.includePartial && to > completeEnd, reason: 'explicit' };
  }

  let from = earliest;
  let reason: Window['reason'] = 'backfill';
  if (input.heldEnd !== null && input.heldEnd > earliest) {
    from = Math.max(
      earliest,
      floorToGranularity(settleStart(Math.min(input.heldEnd, completeEnd), g, input.settle), g),
    );
    reason = 'incremental';
  }
  if (end <= from) return null;
  return { granularity: g, from, to: end, partial: !!input.includePartial, reason };
}

export function describeLookback(g: Granularity): string {
  const days = LOOKBACK_MS[g] / 86_400_000;
  if (g === 'hourly') return `the last ${LOOKBACK_MS[g] / 3_600_000} hours`;
  if (g === 'daily') return `the last ${days} days`;
  return 'the last year';
}

/** Parses an ISO date or date-time given on the command line; a bare date means midnight UTC. */
export function parseIsoFlag(flag: string, value: string): number {
  const bare = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const ms = Date.parse(bare ? `${value}T00:00:00Z` : value);
  if ((!bare && !withZone) || Number.isNaN(ms)) {
    throw new UsageError(
      `${flag} "${value}" is not a date: use YYYY-MM-DD (midnight UTC) or an ISO date-time with a zone, such as 2026-10-01T00:00:00Z.`,
    );
  }
  // Date.parse accepts 2026-02-31; the round trip catches it.
  if (bare && new Date(ms).toISOString().slice(0, 10) !== value) {
    throw new UsageError(`${flag} "${value}" is not a calendar date.`);
  }
  return ms;
}
