// The sandbox: a real HTTP server on 127.0.0.1 that behaves as the management API does (ARCHITECTURE.md,
// "API facts"): bearer keys, the listing and consumption endpoints, exact rate limits, injected
// faults, a settable clock, and counters of everything it served under /__sandbox/ (controlRoutes.ts).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BURST_PER_SECOND_PER_ROUTE, RATE_LIMIT_PER_MINUTE } from '../contract/api.js';
import { authenticate, keyTable } from './auth.js';
import { CONTROL_PREFIX, control, type ControlState } from './controlRoutes.js';
import { SandboxClock } from './clock.js';
import { FaultInjector, resolveFaultRates, type FaultRates } from './faults.js';
import { BufferPool, RawJson, serialise } from './json.js';
import { RateLimits } from './limits.js';
import { ReplayCache, replayKey } from './replay.js';
import { ApiError } from './route.js';
import { matchRoute } from './routes.js';
import { copyStats, emptyStats, type SandboxStats } from './stats.js';
import { generateWorld, type SandboxKeys, type Scenario, type World } from './world.js';

export type { SandboxStats } from './stats.js';
export type { World } from './world.js';

export interface SandboxOptions {
  /** Default 0 (ephemeral); the host is always 127.0.0.1. */
  port?: number;
  seed?: number;
  scenario?: Scenario;
  /** Epoch ms the clock starts at; default Date.now(). */
  now?: number;
  /** The clock advances with real time from `now` (default true). */
  advance?: boolean;
  latencyMs?: number;
  /** Total probability of an injected fault, split evenly over 503/423/429/drop. */
  faultRate?: number;
  faults?: FaultRates;
  limits?: { perMinute?: number; perSecondPerRoute?: number };
  /** Labelled events (spikes, a starting program, a drift, spending limits): events.ts. */
  events?: boolean;
  /** Serve each answer's stored bytes once rendered (replay.ts); useful with `advance: false`. */
  replay?: boolean | { maxBytes: number };
}

export interface Sandbox {
  baseUrl: string;
  /** The personal key: reaches every organisation the user is a member of. */
  apiKey: string;
  keys: SandboxKeys;
  world: World;
  now(): number;
  setNow(ms: number): void;
  stats(): SandboxStats;
  resetStats(): void;
  close(): Promise<void>;
}

const API_PREFIX = '/v1';

/** What a request is served from: the world, its keys, the controls' state and the injected faults. */
interface Served {
  world: World;
  keys: ReturnType<typeof keyTable>;
  clock: SandboxClock;
  faults: FaultInjector;
  state: ControlState;
  pool: BufferPool;
  replay: ReplayCache | undefined;
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const seed = opts.seed ?? 1;
  const start = opts.now ?? Date.now();
  const clock = new SandboxClock(start, opts.advance ?? true);
  const world = generateWorld({
    seed,
    scenario: opts.scenario ?? 'small',
    now: start,
    ...(opts.events ? { events: true } : {}),
  });
  const keys = keyTable(world);
  const faults = new FaultInjector(seed, resolveFaultRates(opts.faultRate, opts.faults));
  const replay = opts.replay ? new ReplayCache(opts.replay === true ? undefined : opts.replay.maxBytes) : undefined;
  // The state the /__sandbox/ controls (controlRoutes.ts) read and change.
  const state: ControlState = {
    clock,
    stats: emptyStats(),
    limits: new RateLimits(
      opts.limits?.perMinute ?? RATE_LIMIT_PER_MINUTE,
      opts.limits?.perSecondPerRoute ?? BURST_PER_SECOND_PER_ROUTE,
    ),
    latencyMs: opts.latencyMs ?? 0,
    ...(replay ? { replay } : {}),
  };
  const served: Served = { world, keys, clock, faults, state, pool: new BufferPool(), replay };

  const server = createServer((req, res) => {
    handle(served, req, res).catch((err: unknown) => {
      if (res.headersSent || res.destroyed) return;
      const given = req.headers['x-request-id'];
      const requestId = typeof given === 'string' && given !== '' ? given : randomUUID();
      const apiErr =
        err instanceof ApiError
          ? err
          : err instanceof URIError
            ? new ApiError(400, 'bad_request', 'malformed URL')
            : new ApiError(500, 'internal', String(err));
      sendError(state, res, requestId, apiErr, !(req.url ?? '').startsWith(CONTROL_PREFIX));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}${API_PREFIX}`,
    apiKey: world.keys.personal,
    keys: world.keys,
    world,
    now: () => clock.now(),
    setNow: (ms) => clock.set(ms),
    stats: () => copyStats(state.stats),
    resetStats: () => {
      state.stats = emptyStats();
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function send(
  state: ControlState,
  res: ServerResponse,
  status: number,
  requestId: string,
  body: unknown,
  headers: Record<string, string> = {},
  counted = true,
): void {
  const text = serialise(body);
  if (counted) {
    state.stats.byStatus[String(status)] = (state.stats.byStatus[String(status)] ?? 0) + 1;
    state.stats.bytesSent += text.length;
  }
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': text.length,
    'x-request-id': requestId,
    ...headers,
  });
  if (body instanceof RawJson) {
    // The buffer goes back to the pool only once the response is flushed or abandoned.
    res.once('finish', body.release);
    res.once('close', body.release);
  }
  res.end(text);
}

function sendError(state: ControlState, res: ServerResponse, requestId: string, err: ApiError, counted: boolean): void {
  send(
    state,
    res,
    err.status,
    requestId,
    { request_id: requestId, code: err.code, message: err.message },
    err.headers,
    counted,
  );
}

/** One request, in the API's order: route, key, rate limits, latency and faults, then the route's answer. */
async function handle(served: Served, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { world, keys, clock, state, pool } = served;
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && given !== '' ? given : randomUUID();
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname.startsWith(CONTROL_PREFIX))
    return void send(
      state,
      res,
      200,
      requestId,
      await control(req, url.pathname.slice(CONTROL_PREFIX.length), state),
      {},
      false,
    );

  const path = url.pathname.startsWith(API_PREFIX + '/') ? url.pathname.slice(API_PREFIX.length) : undefined;
  const matched = path === undefined ? undefined : matchRoute(path);
  const template = matched?.route.template ?? 'unmatched';
  state.stats.total++;
  state.stats.byRoute[template] = (state.stats.byRoute[template] ?? 0) + 1;
  state.stats.firstSeq[template] ??= state.stats.total;
  state.stats.lastSeq[template] = state.stats.total;
  if (path === undefined)
    throw new ApiError(404, 'not_found', `no endpoint at ${url.pathname}; the API is under ${API_PREFIX}`);

  const key = authenticate(keys, req.headers.authorization);
  if (!key) throw new ApiError(401, 'unauthorized', 'a valid API key is required: Authorization: Bearer <key>');

  const verdict = state.limits.check(key.token, template, performance.now());
  if (!verdict.ok) {
    state.stats.violations.total++;
    if (verdict.perMinute) state.stats.violations.perMinute++;
    if (verdict.perSecond) state.stats.violations.perSecond++;
    state.stats.throttledByLimit++;
    throw new ApiError(429, 'rate_limited', 'rate limit exceeded', {
      'retry-after': String(verdict.retryAfterSeconds),
    });
  }
  if (await injectFault(served, req)) return;

  if (!matched) throw new ApiError(404, 'not_found', `no endpoint at ${url.pathname}`);
  if (req.method !== 'GET') throw new ApiError(405, 'method_not_allowed', `${req.method} is not served on ${template}`);
  const ctx = { world, key, now: clock.now(), query: url.searchParams, params: matched.params, template, pool };
  const body = served.replay
    ? served.replay.answer(replayKey(key.token, req.method, url), ctx.now, state.stats, () => matched.route.handle(ctx))
    : matched.route.handle(ctx);
  send(state, res, 200, requestId, body);
}

/** The configured latency, then a fault drawn: true when the connection was dropped; an error thrown for the others. */
async function injectFault({ state, faults }: Served, req: IncomingMessage): Promise<boolean> {
  if (state.latencyMs > 0) {
    state.stats.faults.latency++;
    await new Promise((r) => setTimeout(r, state.latencyMs));
  }
  const fault = faults.draw();
  if (fault === 'drop') {
    state.stats.faults.drop++;
    req.socket.destroy();
    return true;
  }
  if (fault === '503') {
    state.stats.faults['503']++;
    throw new ApiError(503, 'service_unavailable', 'the service is temporarily unavailable; retry');
  }
  if (fault === '423') {
    state.stats.faults['423']++;
    throw new ApiError(423, 'locked', 'another operation on the program is in progress; retry later');
  }
  if (fault === '429') {
    state.stats.faults['429']++;
    throw new ApiError(429, 'rate_limited', 'too many requests', { 'retry-after': '1' });
  }
  return false;
}
