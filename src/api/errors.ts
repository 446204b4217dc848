// Typed failures of the management API client. Every message names the request (method, path, request id)
// so an operator can quote it to the API's support; none ever carries a header or the key.

/** Statuses the API reference (§7) calls safe to retry: 423 (operation in progress), 429 (rate limit), 503. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([423, 429, 503]);
/** §7.3: methods that are idempotent, so a network error or timeout may be retried. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Longest path (with query) quoted in a message; the full one stays on the error's `path`. */
const MAX_PATH_IN_MESSAGE = 200;

export function shortPath(path: string): string {
  return path.length > MAX_PATH_IN_MESSAGE ? path.slice(0, MAX_PATH_IN_MESSAGE) + '…' : path;
}

export interface ApiErrorInit {
  status: number;
  code: string;
  /** The `message` of the API's error body (or a description of the body when it had none). */
  apiMessage: string;
  requestId: string;
  method: string;
  path: string;
  retryAfterMs?: number;
}

/** The API answered with a non-2xx status. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly apiMessage: string;
  readonly requestId: string;
  readonly method: string;
  /** Path relative to the base URL, with its query string (the query holds nothing secret). */
  readonly path: string;
  readonly retryAfterMs?: number;

  constructor(init: ApiErrorInit) {
    super(
      `${init.method} ${shortPath(init.path)} answered ${init.status} ` +
        `(code ${init.code || '(none)'}, request id ${init.requestId || '(none)'}): ${init.apiMessage}`,
    );
    this.status = init.status;
    this.code = init.code;
    this.apiMessage = init.apiMessage;
    this.requestId = init.requestId;
    this.method = init.method;
    this.path = init.path;
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
  }
}

export interface NetworkErrorInit {
  requestId: string;
  method: string;
  path: string;
  cause: unknown;
}

/** No answer: connection refused or reset, socket closed mid-response, or a timeout. */
export class NetworkError extends Error {
  override readonly name = 'NetworkError';
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  override readonly cause: unknown;

  constructor(init: NetworkErrorInit) {
    super(
      `${init.method} ${shortPath(init.path)} got no answer (request id ${init.requestId}): ${describeCause(init.cause)}`,
    );
    this.requestId = init.requestId;
    this.method = init.method;
    this.path = init.path;
    this.cause = init.cause;
  }
}

/** The API answered 2xx with something that is not JSON, or not the shape the caller expects. */
export class ResponseFormatError extends Error {
  override readonly name = 'ResponseFormatError';
  readonly requestId: string;
  readonly path: string;

  /** `message` is used as given: it should say what was expected and what was received. */
  constructor(message: string, requestId: string, path: string) {
    super(message);
    this.requestId = requestId;
    this.path = path;
  }
}

/** The API key is missing, ambiguous or unreadable. A configuration problem: the user must act. */
export class CredentialsError extends Error {
  override readonly name = 'CredentialsError';
}

/** Whether a request that failed with `err` may be sent again unchanged. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof ApiError) return RETRYABLE_STATUSES.has(err.status);
  if (err instanceof NetworkError) return IDEMPOTENT_METHODS.has(err.method);
  return false;
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message;
  }
  return String(cause);
}

/** A response body larger than the configured cap (api.max_body_mb): refused, not retried. */
export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';
  constructor(
    readonly requestId: string,
    readonly path: string,
    readonly maxBytes: number,
  ) {
    super(
      `GET ${shortPath(path)} answered with a body larger than ${Math.round(maxBytes / 1024 / 1024)} MB (request id ${requestId}); ` +
        `refused without reading it all. If such pages are expected, raise api.max_body_mb in the config.`,
    );
  }
}
