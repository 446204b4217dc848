// The sandbox's own controls under /__sandbox/ (not part of the API, and not counted in its stats):
// GET stats, POST reset-stats, GET/POST clock, POST pace, POST replay/clear. Tests and the benchmark read what the
// server served and set its clock and pace through them.

import type { IncomingMessage } from 'node:http';
import { BURST_PER_SECOND_PER_ROUTE, RATE_LIMIT_PER_MINUTE } from '../contract/api.js';
import type { SandboxClock } from './clock.js';
import { isoSeconds } from './json.js';
import { RateLimits } from './limits.js';
import type { ReplayCache } from './replay.js';
import { ApiError } from './route.js';
import { copyStats, emptyStats, type SandboxStats } from './stats.js';

export const CONTROL_PREFIX = '/__sandbox/';
const MAX_CONTROL_BODY = 64 * 1024;

/** What the controls read and change: the server holds it and reads it on every request. */
export interface ControlState {
  readonly clock: SandboxClock;
  stats: SandboxStats;
  limits: RateLimits;
  latencyMs: number;
  /** The stored answers, when the sandbox replays (replay.ts). */
  readonly replay?: ReplayCache;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      data += chunk;
      if (data.length > MAX_CONTROL_BODY) reject(new ApiError(413, 'payload_too_large', 'body too large'));
    });
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

/** The 200 answer to the control at `path` (below CONTROL_PREFIX); an ApiError for anything else. */
export async function control(req: IncomingMessage, path: string, state: ControlState): Promise<unknown> {
  const { clock } = state;
  if (req.method === 'GET' && path === 'stats') return copyStats(state.stats);
  if (req.method === 'POST' && path === 'reset-stats') {
    state.stats = emptyStats();
    return { ok: true };
  }
  if (req.method === 'POST' && path === 'replay/clear') {
    if (!state.replay) throw new ApiError(404, 'not_found', 'this sandbox does not replay (start it with --replay)');
    return { cleared: state.replay.clear() };
  }
  if (path === 'clock' && req.method === 'GET') return { now: isoSeconds(clock.now()) };
  if (path === 'clock' && req.method === 'POST') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readBody(req));
    } catch {
      throw new ApiError(400, 'bad_request', 'body must be JSON: {"now": "<ISO date-time>"}');
    }
    const now =
      typeof parsed === 'object' && parsed !== null ? Date.parse(String((parsed as { now?: unknown }).now)) : NaN;
    if (Number.isNaN(now)) throw new ApiError(400, 'bad_request', 'body must be {"now": "<ISO date-time>"}');
    clock.set(now);
    return { now: isoSeconds(clock.now()) };
  }
  if (path === 'pace' && req.method === 'POST') {
    // The benchmark's set-up (e.g. a whole inventory before a steady-state run) need not wait like a real
    // account: {"latency_ms", "per_minute", "per_second_per_route"}, each optional.
    let parsed: { latency_ms?: unknown; per_minute?: unknown; per_second_per_route?: unknown };
    try {
      parsed = JSON.parse(await readBody(req)) as typeof parsed;
    } catch {
      throw new ApiError(400, 'bad_request', 'body must be JSON: {"latency_ms", "per_minute", "per_second_per_route"}');
    }
    const num = (v: unknown, fallback: number) =>
      typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : fallback;
    state.latencyMs = num(parsed.latency_ms, state.latencyMs);
    if (parsed.per_minute !== undefined || parsed.per_second_per_route !== undefined) {
      state.limits = new RateLimits(
        num(parsed.per_minute, RATE_LIMIT_PER_MINUTE),
        num(parsed.per_second_per_route, BURST_PER_SECOND_PER_ROUTE),
      );
    }
    return { latency_ms: state.latencyMs };
  }
  throw new ApiError(404, 'not_found', `no sandbox control at ${path}`);
}
