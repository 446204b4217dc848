// HTTP client of the management API: keep-alive connection pool, bearer key, a fresh X-Request-ID per
// attempt, bounded concurrency, every attempt (retries included) through the rate limiter, bounded retries
// of what the API reference calls safe to retry (§7), and lossless JSON. Headers are never logged or quoted.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import PQueue from 'p-queue';
import { Pool } from 'undici';
import { CONFIG_DEFAULTS } from '../config/schema.js';
import { silentLogger, type Logger } from '../log.js';
import {
  ApiError,
  isRetryable,
  NetworkError,
  ResponseFormatError,
  ResponseTooLargeError,
  shortPath,
} from './errors.js';
import { parseJson } from './json.js';
import type { RateLimiter } from './limiter.js';
import { backoffDelay, DEFAULT_MAX_RETRY_DELAY_MS, parseRetryAfter } from './retry.js';

export const DEFAULT_CONCURRENCY = CONFIG_DEFAULTS.api.concurrency;
export const DEFAULT_TIMEOUT_MS = CONFIG_DEFAULTS.api.timeout_ms;
export const DEFAULT_MAX_RETRIES = CONFIG_DEFAULTS.api.max_retries;
/** A response body beyond this is refused rather than buffered (an endless body must not fill memory). */
export const DEFAULT_MAX_BODY_BYTES = CONFIG_DEFAULTS.api.max_body_mb * 1024 * 1024;
/** Connecting should be quick; a longer wait means the host is unreachable. */
const MAX_CONNECT_TIMEOUT_MS = 10_000;
/** Idle pooled connections are kept this long between pages. */
const KEEP_ALIVE_MS = 30_000;
/** How much of an unexpected body is quoted in an error. */
const QUOTE_CHARS = 200;
const DEFAULT_USER_AGENT = 'usage-pipeline';

export type QueryValue = string | number | boolean | readonly string[] | undefined;
export type Query = Record<string, QueryValue>;

export interface ClientOptions {
  /** The API root including its version segment, e.g. http://127.0.0.1:8080/v1. */
  baseUrl: string;
  apiKey: string;
  limiter: RateLimiter;
  concurrency?: number;
  /** Per attempt: connect, first byte and whole body. */
  timeoutMs?: number;
  maxRetries?: number;
  /** Longest single wait between attempts, Retry-After included (config api.max_retry_after_seconds; default 60 s). */
  maxRetryDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  log?: Logger;
  userAgent?: string;
  /** Largest response body accepted; default 256 MB. */
  maxBodyBytes?: number;
  /** The run's stop: ends every wait (queue, limiter, back-off, request, body) and sends nothing more once aborted. */
  signal?: AbortSignal;
}

/** Per call: `signal` adds to the client's stop; `inflight` (default: the stop) cancels a request already sent. */
export interface CallOptions {
  route?: string;
  signal?: AbortSignal;
  inflight?: AbortSignal;
  /** Among requests waiting for a connection or for the rate limiter, higher goes first (default 0): a
   *  page whose cursor others wait on should not queue behind pages nothing waits on. */
  priority?: number;
}

export interface ClientStats {
  /** Attempts sent, retries included. */
  requests: number;
  retries: number;
  /** 429 answers. */
  throttled: number;
  networkErrors: number;
  /** Response body bytes received. */
  bytes: number;
}

export interface JsonResponse<T> {
  body: T;
  requestId: string;
  status: number;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface BodyResponse {
  /** The 2xx body's bytes, undecoded. */
  body: Buffer;
  requestId: string;
  status: number;
  /** The path with its query, relative to the base URL, for messages. */
  path: string;
}

type Headers = Record<string, string | string[] | undefined>;
type Decode<R> = (body: Buffer, requestId: string, status: number, target: string, headers: Headers) => R;

export class ApiClient {
  private readonly origin: string;
  private readonly basePath: string;
  private readonly apiKey: string;
  private readonly limiter: RateLimiter;
  private readonly pool: Pool;
  private readonly queue: PQueue;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly maxRetryDelayMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly log: Logger;
  private readonly userAgent: string;
  private readonly maxBodyBytes: number;
  private readonly signal: AbortSignal | undefined;
  /** getJson calls not yet settled, so that close() does not pull the pool from under a pending retry. */
  private readonly active = new Set<Promise<unknown>>();
  private readonly counters: ClientStats = { requests: 0, retries: 0, throttled: 0, networkErrors: 0, bytes: 0 };

  constructor(opts: ClientOptions) {
    const url = new URL(opts.baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new RangeError(`base URL must be http(s): ${url.protocol}`);
    }
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.apiKey = opts.apiKey;
    this.limiter = opts.limiter;
    const concurrency = opts.concurrency ?? DEFAULT_CONCURRENCY;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    // The configured cap wins (api.max_retry_after_seconds, up to an hour): a server asking for 5 minutes gets them.
    this.maxRetryDelayMs = opts.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
    this.sleep = opts.sleep ?? defaultSleep;
    this.random = opts.random ?? Math.random;
    this.log = opts.log ?? silentLogger;
    this.userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
    this.maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.signal = opts.signal;
    // Every queued request listens on the run's signal until it starts (p-queue), and an inventory
    // refresh queues one per program: many listeners are expected, not a leak.
    if (opts.signal) setMaxListeners(0, opts.signal);
    this.queue = new PQueue({ concurrency });
    this.pool = new Pool(this.origin, {
      connections: concurrency,
      keepAliveTimeout: KEEP_ALIVE_MS,
      connectTimeout: Math.min(this.timeoutMs, MAX_CONNECT_TIMEOUT_MS),
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  get stats(): ClientStats {
    return { ...this.counters };
  }

  /**
   * GET {baseUrl}{path}?query and parse the JSON answer. `route` is the path template used for the
   * per-route limit (e.g. '/programs/{id}/frameworks'); defaults to path. Array query values are sent
   * comma-separated; undefined values are left out. Retries what is safe to retry, then throws the last error.
   */
  async getJson<T = unknown>(path: string, query?: Query, opts?: CallOptions): Promise<JsonResponse<T>> {
    return this.get(path, query, opts, (body, requestId, status, target, headers) => {
      try {
        return { body: parseJson(body) as T, requestId, status };
      } catch (err) {
        const type = headerValue(headers['content-type']) ?? 'no content type';
        throw new ResponseFormatError(
          `GET ${shortPath(target)} answered ${status} with a body that is not JSON in UTF-8 ` +
            `(${type}, request id ${requestId}; ${(err as Error).message}): ${quote(body.toString('utf8'))}`,
          requestId,
          target,
        );
      }
    });
  }

  /**
   * Like getJson, but hands back the 2xx body's bytes, neither decoded nor parsed: a consumption page is
   * scanned from its bytes (page/scanPage.ts), so its values never become JavaScript objects.
   */
  async getBody(path: string, query?: Query, opts?: CallOptions): Promise<BodyResponse> {
    return this.get(path, query, opts, (body, requestId, status, target) => ({
      body,
      requestId,
      status,
      path: target,
    }));
  }

  private async get<R>(
    path: string,
    query: Query | undefined,
    opts: CallOptions | undefined,
    decode: Decode<R>,
  ): Promise<R> {
    const call = this.getWithRetries(path, query, opts, decode);
    this.active.add(call);
    try {
      return await call;
    } finally {
      this.active.delete(call);
    }
  }

  private async getWithRetries<R>(
    path: string,
    query: Query | undefined,
    opts: CallOptions | undefined,
    decode: Decode<R>,
  ): Promise<R> {
    const route = opts?.route ?? path;
    const qs = query ? buildQuery(query) : '';
    const target = qs ? `${path}?${qs}` : path;
    const stops = [this.signal, opts?.signal].filter((s): s is AbortSignal => s !== undefined);
    const stop = stops.length === 0 ? undefined : stops.length === 1 ? stops[0] : AbortSignal.any(stops);
    const inflight = opts?.inflight ?? stop;
    // A caller's signal is shared by every request it queues (an inventory queues one per listing).
    for (const s of [stop, inflight]) if (s && s !== this.signal) setMaxListeners(0, s);
    for (let attempt = 0; ; attempt++) {
      stop?.throwIfAborted();
      try {
        // p-queue's signal also rejects a task already running: it gets `inflight`, so that answers on their way
        // during a grace period are kept; a queued task that starts after the stop sends nothing (attempt()).
        return await this.queue.add(() => this.attempt(target, route, decode, stop, inflight, opts?.priority), {
          priority: opts?.priority ?? 0,
          ...(inflight ? { signal: inflight } : {}),
        });
      } catch (err) {
        stop?.throwIfAborted();
        if (!isRetryable(err) || attempt >= this.maxRetries) throw err;
        const retryAfterMs = err instanceof ApiError ? err.retryAfterMs : undefined;
        const delay = backoffDelay(attempt, { random: this.random, capMs: this.maxRetryDelayMs, retryAfterMs });
        this.counters.retries++;
        this.log.debug('retrying request', {
          path: target,
          attempt: attempt + 1,
          delay_ms: delay,
          error: (err as Error).message,
        });
        await abortable(this.sleep(delay), stop);
      }
    }
  }

  /** Waits for every call in progress (including one waiting to retry), then closes the connections. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.active]);
    await this.queue.onIdle();
    await this.pool.close();
  }

  /** One attempt: waits for the limiter, sends, reads, classifies. */
  private async attempt<R>(
    target: string,
    route: string,
    decode: Decode<R>,
    stop?: AbortSignal,
    inflight?: AbortSignal,
    priority = 0,
  ): Promise<R> {
    stop?.throwIfAborted();
    await abortable(this.limiter.acquire(route, priority), stop);
    // Granted, but the run was stopped meanwhile: nothing new is sent.
    stop?.throwIfAborted();
    const requestId = randomUUID();
    this.counters.requests++;
    let status: number;
    let headers: Headers;
    let buf: Buffer;
    try {
      const res = await this.pool.request({
        method: 'GET',
        path: this.basePath + target,
        headers: {
          authorization: `Bearer ${this.apiKey}`,
          accept: 'application/json',
          'user-agent': this.userAgent,
          'x-request-id': requestId,
        },
        signal: inflight
          ? AbortSignal.any([AbortSignal.timeout(this.timeoutMs), inflight])
          : AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      headers = res.headers;
      buf = await readCapped(
        res.body,
        this.maxBodyBytes,
        headers,
        () => new ResponseTooLargeError(requestId, target, this.maxBodyBytes),
      );
    } catch (cause) {
      // A malformed request is our bug, not the network's: do not retry it. Nor a body too large.
      if ((cause as { code?: unknown }).code === 'UND_ERR_INVALID_ARG' || cause instanceof ResponseTooLargeError)
        throw cause;
      // Our own stop is not the network's fault either.
      if (inflight?.aborted) throw inflight.reason;
      this.counters.networkErrors++;
      throw new NetworkError({ requestId, method: 'GET', path: target, cause });
    }
    this.counters.bytes += buf.length;

    // The server's id for this request (the API echoes ours; a proxy or another server may name its own).
    if (status >= 200 && status < 300)
      return decode(buf, headerValue(headers['x-request-id']) ?? requestId, status, target, headers);
    const text = buf.toString('utf8');

    const retryAfterMs = parseRetryAfter(headers['retry-after']);
    if (status === 429) {
      this.counters.throttled++;
      // The limiter pauses every request: a Retry-After of a day must not stop the run for a day.
      this.limiter.onThrottled(retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, this.maxRetryDelayMs));
    }
    const { code, message, bodyRequestId } = readErrorBody(text);
    throw new ApiError({
      status,
      code,
      apiMessage: message,
      requestId: bodyRequestId ?? headerValue(headers['x-request-id']) ?? requestId,
      method: 'GET',
      path: target,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
}

/** Reads a body up to `max` bytes; beyond (announced or received) the connection is dropped and `tooLarge` thrown. */
async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  max: number,
  headers: Headers,
  tooLarge: () => Error,
): Promise<Buffer> {
  const announced = Number(headerValue(headers['content-length']));
  if (Number.isFinite(announced) && announced > max) {
    body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** Settles with `p`, or rejects with the signal's reason as soon as it is aborted. */
export function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/** Builds a query string; arrays become one comma-separated value (§4.3 accepts a comma list). */
export function buildQuery(query: Query): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const encoded = isStringArray(value)
      ? value.map((v) => encodeURIComponent(v)).join(',')
      : encodeURIComponent(String(value));
    parts.push(`${encodeURIComponent(key)}=${encoded}`);
  }
  return parts.join('&');
}

function isStringArray(v: QueryValue): v is readonly string[] {
  return Array.isArray(v);
}

/** The API reference's error body is {request_id, code, message}; anything else is described, not trusted. */
function readErrorBody(text: string): { code: string; message: string; bodyRequestId?: string } {
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? undefined : parseJson(text);
  } catch {
    return { code: '', message: `(body is not JSON) ${quote(text)}` };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { code: '', message: parsed === undefined ? '(empty body)' : `(unexpected body) ${quote(text)}` };
  }
  const b = parsed as Record<string, unknown>;
  const out: { code: string; message: string; bodyRequestId?: string } = {
    code: typeof b.code === 'string' ? b.code : '',
    message: typeof b.message === 'string' ? b.message : `(no message) ${quote(text)}`,
  };
  if (typeof b.request_id === 'string' && b.request_id !== '') out.bodyRequestId = b.request_id;
  return out;
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

function quote(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(oneLine.length > QUOTE_CHARS ? oneLine.slice(0, QUOTE_CHARS) + '…' : oneLine);
}
