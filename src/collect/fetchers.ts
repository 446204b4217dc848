// The three consumption fetchers: v1 programs, and v2 programs with the frameworks of each programs page
// pipelined behind it.
import { ResponseFormatError } from '../api/errors.js';
import {
  CONSUMPTION_PATHS,
  MAX_PROGRAM_IDS,
  PAGE_SIZE,
  V1_METRICS,
  V2_FRAMEWORK_METRICS,
  V2_PROGRAM_METRICS,
} from '../contract/api.js';
import type { UsageBatch } from '../store/store.js';
import { CollectInterrupted } from './errors.js';
import { nextBatchSize } from './frameworkBatches.js';
import { cursorPages } from './pagers.js';
import type { Window } from './planner.js';
import {
  abortFailed,
  baseQuery,
  beginBatch,
  describe,
  pageBound,
  scopeFailure,
  scopeResult,
  type Fetcher,
  type ScopeContext,
} from './scope.js';
import { stagePage, stagedInOrder } from './stagePage.js';
import type { ScopeResult } from './types.js';

export const fetchV1: Fetcher = async (ctx, w, batch) => {
  const limit = PAGE_SIZE.v1_programs.max;
  const what = describe('v1_programs', ctx);
  const maxPages = pageBound(ctx, await ctx.store.inventory.programCount(ctx.org), limit, 'programs');
  const pages = stagedInOrder(
    cursorPages(
      (cursor) =>
        stagePage(ctx, batch, 'v1_programs', what, {
          ...baseQuery(ctx, w),
          org_id: ctx.org,
          metrics: V1_METRICS,
          limit,
          cursor,
        }),
      { itemsKey: 'programs', limit, describe: what, maxPages },
    ),
  );
  for await (const _ of pages) ctx.checkAbort();
};

/**
 * Commits the programs batch, then the frameworks batch (only when the programs committed and every
 * frameworks request succeeded); a batch that cannot commit is rolled back and reported failed.
 */
async function settleV2Batches(
  ctx: ScopeContext,
  w: Window,
  b: { programs: UsageBatch; frameworks: UsageBatch | null },
  e: { programsError: unknown; fwError: unknown },
  out: ScopeResult[],
): Promise<void> {
  const { programs, frameworks } = b;
  let { programsError } = e;
  const { fwError } = e;
  if (!programsError) {
    try {
      const { rows } = await programs.commit();
      out.push(scopeResult('v2_programs', ctx, w, w.partial ? 'partial' : 'complete', rows));
    } catch (err) {
      programsError = err; // refused at commit (duplicates, rows outside, deletions held): nothing written
    }
  }
  if (programsError) {
    await programs.abort().catch(abortFailed);
    out.push(await scopeFailure(ctx, 'v2_programs', w, programsError));
  }
  if (frameworks) {
    // Without the full list of programs the frameworks batch cannot be complete either.
    let err = programsError ?? fwError;
    if (!err) {
      try {
        const { rows } = await frameworks.commit();
        out.push(scopeResult('v2_frameworks', ctx, w, w.partial ? 'partial' : 'complete', rows));
      } catch (e) {
        err = e;
      }
    }
    if (err) {
      await frameworks.abort().catch(abortFailed);
      out.push(await scopeFailure(ctx, 'v2_frameworks', w, err));
    }
  }
}

/**
 * v2 programs for one organization, and, pipelined behind the programs pages, the frameworks of their
 * programs, in requests of at most 100 programs sized by FrameworkQueue (frameworkBatches.ts). Deleted
 * programs are on the programs pages too, so their frameworks are asked about as well.
 */
export async function runV2(
  ctx: ScopeContext,
  w: Window | null,
  withFrameworks: boolean,
  out: ScopeResult[],
): Promise<void> {
  if (!w) {
    out.push({
      source: 'v2_programs',
      granularity: ctx.granularity,
      scope: ctx.org,
      from: null,
      to: null,
      status: 'up_to_date',
      rows: 0,
    });
    return;
  }
  const programs = beginBatch(ctx, 'v2_programs', w);
  const frameworks = withFrameworks ? beginBatch(ctx, 'v2_frameworks', w) : null;
  const limit = PAGE_SIZE.v2_programs.max;
  const what = describe('v2_programs', ctx);
  const frameworkFetches: Promise<void>[] = [];
  const queue = frameworks
    ? new FrameworkQueue(ctx, w, (ids, known) => {
        const f = fetchFrameworks(ctx, w, ids, known, frameworks);
        f.catch(() => {
          // awaited below; keeps an early rejection from being reported as unhandled
        });
        frameworkFetches.push(f);
      })
    : null;
  let programsError: unknown;
  try {
    const maxPages = pageBound(ctx, await ctx.store.inventory.programCount(ctx.org), limit, 'programs');
    for await (const page of stagedInOrder(
      cursorPages(
        (cursor) =>
          stagePage(ctx, programs, 'v2_programs', what, {
            ...baseQuery(ctx, w),
            org_id: ctx.org,
            metrics: V2_PROGRAM_METRICS,
            limit,
            cursor,
          }),
        { itemsKey: 'programs', limit, describe: what, maxPages },
      ),
    )) {
      ctx.checkAbort();
      if (queue) await queue.add(page.programIds, false);
    }
    if (queue) await queue.add([], true);
  } catch (err) {
    programsError = err;
  }
  const fw = await Promise.allSettled(frameworkFetches);
  const fwError = fw.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
  if (ctx.signal?.aborted) {
    // Stopped: both batches are rolled back (nothing of this scope changes), committed scopes stay.
    await programs.abort().catch(abortFailed);
    await frameworks?.abort().catch(abortFailed);
    throw new CollectInterrupted();
  }

  await settleV2Batches(ctx, w, { programs, frameworks }, { programsError, fwError }, out);
}

/**
 * The programs of the programs pages, cut into frameworks requests by nextBatchSize(): pipelined behind
 * the programs pages, a request leaves as soon as its programs are known.
 */
class FrameworkQueue {
  private readonly ids: string[] = [];
  /** Frameworks each queued program could list in the window (sizes the requests). */
  private readonly counts: number[] = [];
  /** Frameworks the inventory knows of each queued program (bounds a request's pages). */
  private readonly known: number[] = [];
  /** Frameworks the stored usage of the window's granularity names since its start, per program of the
   *  scope: one query, sent while the first programs page is on its way, not one per programs page. */
  private readonly inUsage: Promise<Map<string, number>>;

  constructor(
    private readonly ctx: ScopeContext,
    private readonly w: Window,
    private readonly send: (ids: string[], known: number) => void,
  ) {
    this.inUsage = ctx.store.usage.frameworksByProgram(ctx.org, ctx.granularity, new Date(w.from));
    this.inUsage.catch(() => {
      // awaited by add(); a failed programs listing may never call it
    });
  }

  async add(programIds: string[], final: boolean): Promise<void> {
    if (programIds.length > 0) {
      const [inventory, inUsage] = await Promise.all([
        this.ctx.store.inventory.frameworkCountsByProgram(programIds, new Date(this.w.from)),
        this.inUsage,
      ]);
      for (const id of programIds) {
        const c = inventory.get(id);
        this.ids.push(id);
        // The inventory misses frameworks deleted before it listed them, the usage those created since it was
        // collected or without usage: each count falls short in its own way, so the larger one sizes.
        this.counts.push(Math.max(c?.listable ?? 0, inUsage.get(id) ?? 0));
        // Only the inventory's count bounds the pages: it lists every framework, used or not, whereas a count from
        // usage misses idle ones and so could stop paging short of the answer.
        this.known.push(c?.known ?? 0);
      }
    }
    for (let n; (n = nextBatchSize(this.counts, PAGE_SIZE.v2_frameworks.max, MAX_PROGRAM_IDS, final)) > 0;) {
      this.counts.splice(0, n);
      const known = this.known.splice(0, n).reduce((a, b) => a + b, 0);
      this.send(this.ids.splice(0, n), known);
    }
  }
}

/** `known`: the frameworks the inventory knows of these programs, which bounds the request's pages. */
async function fetchFrameworks(ctx: ScopeContext, w: Window, programIds: string[], known: number, batch: UsageBatch) {
  if (!programIds.length) return;
  const limit = PAGE_SIZE.v2_frameworks.max;
  const what = `GET ${CONSUMPTION_PATHS.v2_frameworks} (${ctx.granularity}, org ${ctx.org}, programs ${programIds[0]}..${programIds.at(-1)})`;
  const maxPages = pageBound(ctx, known, limit, 'frameworks of these programs');
  const asked = new Set(programIds);
  const pages = stagedInOrder(
    cursorPages(
      (cursor) =>
        stagePage(ctx, batch, 'v2_frameworks', what, {
          ...baseQuery(ctx, w),
          program_ids: programIds,
          metrics: V2_FRAMEWORK_METRICS,
          limit,
          cursor,
        }),
      { itemsKey: 'frameworks', limit, describe: what, maxPages },
    ),
  );
  for await (const page of pages) {
    ctx.checkAbort();
    const stray = page.programIds.find((id) => !asked.has(id));
    if (stray !== undefined) {
      throw new ResponseFormatError(
        `${what}: the answer holds program ${stray}, which was not asked for (request id ${page.requestId}); nothing of this scope was changed.`,
        page.requestId,
        what,
      );
    }
  }
}
