// How a collection stops early: the key refused for every request (the whole run fails), or a signal.
import type { ApiError } from '../api/errors.js';

/** The key or the org is wrong for every request: stop the whole run rather than fail scope by scope. */
export class FatalCollectError extends Error {}

export class CollectInterrupted extends Error {
  constructor() {
    super('collection interrupted; committed batches are kept, the one in progress was rolled back');
  }
}

export function fatal401(err: ApiError): FatalCollectError {
  return new FatalCollectError(
    `the API refused the key (401, request id ${err.requestId}): check USAGE_API_KEY or USAGE_API_KEY_FILE; a revoked key must be replaced.`,
  );
}

/** DuckDB ran out of memory during a collect: which limit, what DuckDB said, what was kept (`kept`), and the fix. */
export function outOfMemoryMessage(limit: { key: string; value: string }, err: unknown, kept: string): string {
  return (
    `the database ran out of memory (${limit.key} = ${limit.value}): ${(err as Error).message.split('\n')[0]}. ` +
    `${kept}; raise ${limit.key} in the config and collect again.`
  );
}
