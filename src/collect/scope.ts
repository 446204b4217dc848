// One (source, granularity, organization) scope: its batch, its page bound from the inventory, and its
// result, committed or recorded as failed (a 403 recorded as not eligible).
import { ApiError } from '../api/errors.js';
import { CONSUMPTION_PATHS } from '../contract/api.js';
import type { Granularity, Source } from '../domain/granularity.js';
import type { PageReader } from '../page/pageReader.js';
import type { Slots } from '../store/slots.js';
import { isOutOfMemory, isStoreCorruption, StoreCorruptError, type UsageBatch } from '../store/store.js';
import { CollectInterrupted, fatal401, FatalCollectError, outOfMemoryMessage } from './errors.js';
import type { Window } from './planner.js';
import type { CollectOptions, ScopeResult, ScopeStatus } from './types.js';

export interface ScopeContext extends CollectOptions {
  runId: string;
  org: string;
  granularity: Granularity;
  checkAbort: () => void;
  count: (source: Source, rows: number) => void;
  /** The frameworks pages the run holds, from request to staged (at most PAGES_IN_HAND; stagePage.ts). */
  pagesInHand: Slots;
  /** Reads the frameworks pages off the main thread (page/pageReader.ts), one for the run. */
  pageReader: PageReader;
}

/** Where a batch's rollback fails, after the error that made the scope abort: its pages were never committed, so
 *  nothing of the scope is visible, and the scope reports the first error, which is the one to act on. */
export function abortFailed(): void {
  // nothing to undo (see above)
}

export function beginBatch(ctx: ScopeContext, source: Source, w: Window): UsageBatch {
  return ctx.store.usage.beginBatch({
    table: source === 'v2_frameworks' ? 'usage_framework' : 'usage_program',
    ...(source === 'v2_frameworks' ? {} : { apiVersion: source === 'v1_programs' ? ('v1' as const) : ('v2' as const) }),
    granularity: ctx.granularity,
    windowStart: new Date(w.from),
    windowEnd: new Date(w.to),
    scope: { orgId: ctx.org },
    coverage: { source, scope: ctx.org, status: w.partial ? 'partial' : 'complete' },
    ...(ctx.acceptDeletions ? {} : { maxDeletionShare: ctx.config.collect.max_deletion_share }),
    runId: ctx.runId,
    collectedAt: new Date(),
  });
}

export function baseQuery(ctx: ScopeContext, w: Window) {
  return { granularity: ctx.granularity, from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() };
}

export function describe(source: Source, ctx: ScopeContext): string {
  return `GET ${CONSUMPTION_PATHS[source]} (${ctx.granularity}, org ${ctx.org})`;
}

export type Fetcher = (ctx: ScopeContext, w: Window, batch: UsageBatch) => Promise<void>;

// How many pages a scope can justify: twice what the inventory counts (programs appear between
// refreshes), plus two (a last empty page); without an inventory, collect.max_pages.
export function pageBound(ctx: ScopeContext, known: number, limit: number, what: string) {
  if (known > 0) return { pages: Math.ceil((known * 2) / limit) + 2, why: `the ${known} ${what} the inventory knows` };
  return { pages: ctx.config.collect.max_pages, why: `collect.max_pages (no inventory of ${what} yet)` };
}

/** One scope with a single source: stage, commit, record. Not-eligible (403) is recorded, not a failure. */
export async function runScope(
  ctx: ScopeContext,
  source: Source,
  w: Window | null,
  out: ScopeResult[],
  fetch: Fetcher,
): Promise<void> {
  if (!w) {
    out.push({
      source,
      granularity: ctx.granularity,
      scope: ctx.org,
      from: null,
      to: null,
      status: 'up_to_date',
      rows: 0,
    });
    return;
  }
  const batch = beginBatch(ctx, source, w);
  try {
    await fetch(ctx, w, batch);
    const { rows } = await batch.commit();
    out.push(scopeResult(source, ctx, w, w.partial ? 'partial' : 'complete', rows));
  } catch (err) {
    await batch.abort().catch(abortFailed);
    out.push(await scopeFailure(ctx, source, w, err));
  }
}

export async function scopeFailure(ctx: ScopeContext, source: Source, w: Window, err: unknown): Promise<ScopeResult> {
  if (err instanceof ApiError && err.status === 401) throw fatal401(err);
  if (err instanceof FatalCollectError || err instanceof CollectInterrupted) throw err;
  // DuckDB out of memory: every later scope would fail alike, and a store pressed further risks its file
  // (ARCHITECTURE.md, "Storage"). The scope was rolled back; the run stops (exit 1), the file intact.
  if (isOutOfMemory(err)) {
    throw new FatalCollectError(
      outOfMemoryMessage(
        { key: 'collect.memory_limit', value: ctx.config.collect.memory_limit },
        err,
        'Nothing of the scope in progress was written',
      ),
    );
  }
  // The database file itself cannot be read: nothing more is written, and it must never be published.
  if (isStoreCorruption(err))
    throw err instanceof StoreCorruptError
      ? err
      : new StoreCorruptError(ctx.store.path, (err as Error).message.split('\n')[0] ?? '');
  // Stopped by a signal: every wait ends with the signal's reason; the scope is rolled back, not failed.
  if (ctx.signal?.aborted) throw new CollectInterrupted();
  const notEligible = err instanceof ApiError && err.status === 403;
  // For a 403 the API's own words say why (which plan family the endpoint serves); the request is in the log.
  const detail = notEligible
    ? `403 ${err.code || 'forbidden'}: ${err.apiMessage} (request id ${err.requestId})`
    : err instanceof Error
      ? err.message
      : String(err);
  const status = notEligible ? 'not_eligible' : 'failed';
  if (!notEligible)
    ctx.log.warn('scope failed; other scopes go on', {
      source,
      granularity: ctx.granularity,
      org: ctx.org,
      error: detail,
    });
  await ctx.store.coverage.record({
    source,
    granularity: ctx.granularity,
    scope: ctx.org,
    windowStart: new Date(w.from),
    windowEnd: new Date(w.to),
    status,
    rows: 0,
    runId: ctx.runId,
    collectedAt: new Date(),
    detail,
  });
  return { ...scopeResult(source, ctx, w, status, 0), detail };
}

export function scopeResult(
  source: Source,
  ctx: ScopeContext,
  w: Window,
  status: ScopeStatus,
  rows: number,
): ScopeResult {
  return {
    source,
    granularity: ctx.granularity,
    scope: ctx.org,
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    status,
    rows,
  };
}
