// The client against a real HTTP server on 127.0.0.1 (node:http), scripted per test.
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient, buildQuery, type ClientOptions } from '../../src/api/client.js';
import { ApiError, isRetryable, NetworkError, ResponseFormatError } from '../../src/api/errors.js';
import { RateLimiter } from '../../src/api/limiter.js';
import { createLogger } from '../../src/log.js';

const KEY = 'test-key-0123456789abcdef';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

type Step = (req: IncomingMessage, res: ServerResponse) => void;

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
}

let server: Server;
let baseUrl: string;
let steps: Step[] = [];
let fallback: Step;
let seen: Seen[] = [];
let inFlight = 0;
let maxInFlight = 0;

function json(status: number, body: unknown, headers: Record<string, string> = {}): Step {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** An error the way the API answers one: the caller's X-Request-ID echoed in the body and the header. */
function apiError(status: number, code: string, message: string, headers: Record<string, string> = {}): Step {
  return (req, res) => {
    const id = String(req.headers['x-request-id'] ?? '');
    json(status, { request_id: id, code, message }, { 'x-request-id': id, ...headers })(req, res);
  };
}

const dropConnection: Step = (req) => req.socket.destroy();
const neverAnswer: Step = () => {
  // the request is left waiting: the client's timeout must end it
};

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ url: req.url ?? '', headers: req.headers });
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const done = () => {
      inFlight--;
    };
    res.on('close', done);
    (steps.shift() ?? fallback)(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  steps = [];
  seen = [];
  inFlight = 0;
  maxInFlight = 0;
  fallback = json(200, { ok: true });
});

/** A client whose waits are recorded and skipped; its limiter runs on a simulated clock. */
function makeClient(over: Partial<ClientOptions> = {}) {
  const delays: number[] = [];
  const t = { now: 0 };
  const limiter = new RateLimiter({
    perMinute: 60_000,
    perSecondPerRoute: 1_000,
    headroom: 0.05,
    clock: () => t.now,
    sleep: async (ms) => {
      t.now += ms;
    },
  });
  const logLines: string[] = [];
  const client = new ApiClient({
    baseUrl,
    apiKey: KEY,
    limiter,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
    log: createLogger({ level: 'debug', json: true, write: (l) => logLines.push(l) }),
    ...over,
  });
  return { client, limiter, delays, logLines };
}

describe('ApiClient', () => {
  it('sends the bearer key, JSON accept, the query and a request id, and parses the answer', async () => {
    const { client } = makeClient();
    fallback = json(200, { programs: [{ program_id: 'p1' }] });
    const res = await client.getJson<{ programs: unknown[] }>('/consumption_history/v2/programs', {
      org_id: 'org-1',
      metrics: ['compute_unit_seconds', 'root_branch_bytes_month'],
      limit: 100,
      from: '2025-01-01T00:00:00Z',
      include_v1_metrics: false,
      cursor: undefined,
    });
    await client.close();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ programs: [{ program_id: 'p1' }] });
    expect(res.requestId).toMatch(UUID);
    expect(seen).toHaveLength(1);
    const req = seen[0] as Seen;
    expect(req.url).toBe(
      '/v1/consumption_history/v2/programs?org_id=org-1&metrics=compute_unit_seconds,root_branch_bytes_month' +
        '&limit=100&from=2025-01-01T00%3A00%3A00Z&include_v1_metrics=false',
    );
    expect(req.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(req.headers.accept).toBe('application/json');
    expect(req.headers['x-request-id']).toBe(res.requestId);
    expect(client.stats).toMatchObject({ requests: 1, retries: 0, throttled: 0, networkErrors: 0 });
    expect(client.stats.bytes).toBe(Buffer.byteLength(JSON.stringify({ programs: [{ program_id: 'p1' }] })));
  });

  it('retries 503, 423, 429 and a dropped connection, each through the limiter, then succeeds', async () => {
    const { client, limiter, delays, logLines } = makeClient();
    steps = [
      apiError(503, 'UNAVAILABLE', 'try again'),
      apiError(423, 'LOCKED', 'operation in progress'),
      apiError(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '3' }),
      dropConnection,
      json(200, { done: 1 }),
    ];
    const res = await client.getJson('/programs/p1/frameworks', undefined, { route: '/programs/{id}/frameworks' });
    await client.close();
    expect(res.body).toEqual({ done: 1 });
    expect(seen).toHaveLength(5);
    // Every attempt carries the key and its own request id.
    for (const s of seen) expect(s.headers.authorization).toBe(`Bearer ${KEY}`);
    const ids = seen.map((s) => s.headers['x-request-id'] as string);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(5);
    expect(res.requestId).toBe(ids[4]);
    // Backoff: full jitter (random 0.5) of 500·2^n, with the 429's Retry-After of 3 s as a floor.
    expect(delays).toEqual([250, 500, 3_000, 2_000]);
    expect(client.stats).toMatchObject({ requests: 5, retries: 4, throttled: 1, networkErrors: 1 });
    expect(limiter.stats.acquired).toBe(5);
    expect(limiter.stats.throttles).toBe(1);
    expect(limiter.stats.currentPerMinute).toBeLessThan(60_000 * 0.95);
    // The log says what happened and never carries the key.
    expect(logLines.filter((l) => l.includes('retrying request'))).toHaveLength(4);
    expect(logLines.join('\n')).not.toContain(KEY);
  });

  it('honours Retry-After given as an HTTP date', async () => {
    const { client, delays } = makeClient();
    const t0 = Date.now();
    const date = Math.floor((t0 + 5_000) / 1_000) * 1_000; // an HTTP date has whole seconds
    steps = [apiError(503, 'UNAVAILABLE', 'maintenance', { 'retry-after': new Date(date).toUTCString() })];
    await client.getJson('/x');
    const t1 = Date.now();
    await client.close();
    expect(delays).toHaveLength(1);
    // The wait runs to the date from when the client read the answer, some moment between t0 and t1 (on a
    // loaded machine more than a second may pass: bounds fixed at 4-5 s failed there).
    expect(delays[0]).toBeGreaterThanOrEqual(date - t1);
    expect(delays[0]).toBeLessThanOrEqual(date - t0);
  });

  it('caps each wait at maxRetryDelayMs, even against a long Retry-After', async () => {
    const { client, delays } = makeClient({ maxRetryDelayMs: 1_500 });
    steps = [apiError(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '120' })];
    await client.getJson('/x');
    await client.close();
    expect(delays).toEqual([1_500]);
  });

  it('honours Retry-After beyond the 60 s default up to a configured cap (api.max_retry_after_seconds allows 3600)', async () => {
    const { client, delays } = makeClient({ maxRetryDelayMs: 600_000 });
    steps = [
      apiError(429, 'RATE_LIMITED', 'slow down', { 'retry-after': '120' }),
      apiError(503, 'UNAVAILABLE', 'maintenance', { 'retry-after': '900' }),
    ];
    await client.getJson('/x');
    await client.close();
    expect(delays).toEqual([120_000, 600_000]);
  });

  it('gives up after maxRetries with an ApiError carrying status, code, message and request id', async () => {
    const { client, delays } = makeClient({ maxRetries: 2 });
    fallback = apiError(503, 'UNAVAILABLE', 'the service is down');
    const err = await client.getJson('/consumption_history/v2/programs', { org_id: 'o1' }).catch((e: unknown) => e);
    await client.close();
    expect(seen).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(503);
    expect(e.code).toBe('UNAVAILABLE');
    expect(e.apiMessage).toBe('the service is down');
    expect(e.requestId).toBe(seen[2]?.headers['x-request-id']);
    expect(e.method).toBe('GET');
    expect(e.path).toBe('/consumption_history/v2/programs?org_id=o1');
    expect(e.message).toBe(
      `GET /consumption_history/v2/programs?org_id=o1 answered 503 (code UNAVAILABLE, request id ${e.requestId}): the service is down`,
    );
    expect(e.message).not.toContain(KEY);
    expect(isRetryable(e)).toBe(true);
  });

  it('throws other 4xx at once, and tolerates a body that is not JSON', async () => {
    const { client, delays } = makeClient();
    steps = [
      apiError(404, 'NOT_FOUND', 'not a member of the organization'),
      (_req, res) => {
        res.writeHead(401, { 'content-type': 'text/html' });
        res.end('<html><body>Unauthorized</body></html>');
      },
    ];
    const e404 = (await client.getJson('/consumption_history/v2/programs').catch((e: unknown) => e)) as ApiError;
    const e401 = (await client.getJson('/programs').catch((e: unknown) => e)) as ApiError;
    await client.close();
    expect(seen).toHaveLength(2);
    expect(delays).toEqual([]);
    expect(e404).toBeInstanceOf(ApiError);
    expect(e404.status).toBe(404);
    expect(e404.code).toBe('NOT_FOUND');
    expect(e404.message).toMatch(
      /^GET \/consumption_history\/v2\/programs answered 404 \(code NOT_FOUND, request id [0-9a-f-]{36}\): not a member/,
    );
    expect(isRetryable(e404)).toBe(false);
    expect(e401).toBeInstanceOf(ApiError);
    expect(e401.status).toBe(401);
    expect(e401.code).toBe('');
    expect(e401.requestId).toBe(seen[1]?.headers['x-request-id']);
    expect(e401.message).toContain('Unauthorized');
    expect(e401.message).not.toContain(KEY);
  });

  it('keeps int64 values beyond 2^53 exact', async () => {
    const { client } = makeClient();
    fallback = json(200, '{"values": [9007199254740993, 9223372036854775807, 12], "small": 1}');
    const res = await client.getJson<{ values: unknown[]; small: number }>('/x');
    await client.close();
    expect(res.body.values).toEqual([9007199254740993n, 9223372036854775807n, 12]);
    expect(res.body.small).toBe(1);
  });

  it('reports a 200 that is not JSON as a ResponseFormatError quoting what came, without retrying', async () => {
    const { client, delays } = makeClient();
    const page = '<!doctype html><title>Gateway</title>' + 'x'.repeat(1_000);
    fallback = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(page);
    };
    const err = (await client.getJson('/x', { a: 1 }).catch((e: unknown) => e)) as ResponseFormatError;
    await client.close();
    expect(err).toBeInstanceOf(ResponseFormatError);
    expect(err.path).toBe('/x?a=1');
    expect(err.requestId).toBe(seen[0]?.headers['x-request-id']);
    expect(err.message).toContain('<!doctype html><title>Gateway</title>');
    expect(err.message).toContain('text/html');
    expect(err.message.length).toBeLessThan(400);
    expect(seen).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it('treats a timeout as a network error and retries it', async () => {
    const { client, delays } = makeClient({ timeoutMs: 200 });
    steps = [neverAnswer];
    const res = await client.getJson('/x');
    await client.close();
    expect(res.body).toEqual({ ok: true });
    expect(seen).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(client.stats.networkErrors).toBe(1);
  });

  it('gives up on a dropped connection after maxRetries with a NetworkError naming the request', async () => {
    const { client } = makeClient({ maxRetries: 1 });
    fallback = dropConnection;
    const err = (await client.getJson('/x').catch((e: unknown) => e)) as NetworkError;
    await client.close();
    expect(err).toBeInstanceOf(NetworkError);
    expect(seen).toHaveLength(2);
    expect(err.requestId).toBe(seen[1]?.headers['x-request-id']);
    expect(err.message).toContain(`GET /x got no answer (request id ${err.requestId})`);
    expect(isRetryable(err)).toBe(true);
  });

  it('runs at most `concurrency` requests at once', async () => {
    const { client } = makeClient({ concurrency: 2 });
    fallback = (req, res) => setTimeout(() => json(200, { url: req.url })(req, res), 40);
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => client.getJson(`/item/${i}`)));
    await client.close();
    expect(all.map((r) => r.body)).toEqual(Array.from({ length: 6 }, (_, i) => ({ url: `/v1/item/${i}` })));
    expect(maxInFlight).toBe(2);
  });
});

describe('buildQuery', () => {
  it('joins arrays with commas, encodes values, drops undefined', () => {
    expect(buildQuery({ a: ['x y', 'z&'], b: 2, c: true, d: undefined, 'e f': 'g=h' })).toBe(
      'a=x%20y,z%26&b=2&c=true&e%20f=g%3Dh',
    );
  });
});
