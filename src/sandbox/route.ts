// What every /v1 route shares: the request it is given, and the error it throws for the statuses the
// API documents (400 bad request, 403 not eligible, 404 not found).

import type { KeyReach } from './auth.js';
import type { BufferPool } from './json.js';
import type { World } from './world.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface RouteContext {
  world: World;
  key: KeyReach;
  now: number;
  query: URLSearchParams;
  /** Path parameters captured by the route's pattern. */
  params: string[];
  /** Route template, part of what decides the shape of a query's last page. */
  template: string;
  /** Buffers for consumption pages, reused across responses. */
  pool: BufferPool;
}

export interface Route {
  template: string;
  pattern: RegExp;
  handle(ctx: RouteContext): unknown;
}

export const bad = (message: string): ApiError => new ApiError(400, 'bad_request', message);
export const notFound = (message: string): ApiError => new ApiError(404, 'not_found', message);
export const notEligible = (message: string): ApiError => new ApiError(403, 'forbidden', message);
