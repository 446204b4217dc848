// Retry timing: exponential backoff with full jitter (so that many clients, or many requests of one client,
// do not retry in lockstep), with the server's Retry-After as a floor and a cap on any single wait.

import { CONFIG_DEFAULTS } from '../config/schema.js';

export const BACKOFF_BASE_MS = 500;
export const DEFAULT_MAX_RETRY_DELAY_MS = CONFIG_DEFAULTS.api.max_retry_after_seconds * 1000;

/**
 * Delay before retry number `attempt` (0 for the first retry): uniform in [0, min(cap, base·2^attempt)),
 * raised to `retryAfterMs` when the server named a time, and never above `capMs`.
 */
export function backoffDelay(
  attempt: number,
  opts: { random: () => number; capMs: number; baseMs?: number; retryAfterMs?: number },
): number {
  const base = opts.baseMs ?? BACKOFF_BASE_MS;
  const ceiling = Math.min(opts.capMs, base * 2 ** Math.min(attempt, 30));
  let delay = Math.floor(opts.random() * ceiling);
  if (opts.retryAfterMs !== undefined) delay = Math.max(delay, opts.retryAfterMs);
  return Math.max(0, Math.min(delay, opts.capMs));
}

/**
 * Parses a Retry-After header (RFC 9110: delay-seconds or an HTTP-date) into milliseconds from `nowMs`.
 * Returns undefined when absent or unreadable; a date in the past gives 0.
 */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number = Date.now()): number | undefined {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  // An HTTP-date names a month (and day); without letters, Date.parse would accept things like "-3".
  if (!/[a-z]{3}/i.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
