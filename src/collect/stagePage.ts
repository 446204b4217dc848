// One consumption page fetched as bytes and staged in its batch; DuckDB's errors on its content told apart
// from ours (the API answering nonsense vs memory or disk).
import { ResponseFormatError } from '../api/errors.js';
import { CONSUMPTION_PATHS } from '../contract/api.js';
import { collectPageGarbage } from '../heap.js';
import { PageContentError, type UsageBatch } from '../store/store.js';
import type { PageSource } from '../store/types.js';
import type { ScopeContext } from './scope.js';

/** Frameworks pages a collection holds at once, from request to staged: enough to keep the rate limit busy
 *  while one is staged, few enough that waiting pages cost little memory (up to 16 MB each as bytes). */
/** A chained source's pages take no slot of pagesInHand, so there is none to release. */
function holdsNoSlot(): void {
  // nothing held
}

export const PAGES_IN_HAND = 8;

/** A page read and on its way into the batch: what paging needs at once, and its staging to wait for. */
export interface ReadPage {
  items: number | null;
  cursor: string | null;
  programIds: string[];
  /** The items' own ids: frameworks on a frameworks page, programs otherwise (the runaway-cursor guard). */
  ids: readonly string[];
  requestId: string;
  /** Settles once the page's rows are staged; rejects with the reason it could not be. */
  staged: Promise<void>;
}

/**
 * Fetches one consumption page's bytes, reads it (page/readPage.ts) and hands its rows to the batch to
 * stage. It returns once the page is read, before it is staged: its cursor can send the next request
 * while the batch's staging catches up (stagedInOrder). A body that is not the documented shape is the
 * API answering nonsense: reported with the request id, and the batch is not committed.
 */
export async function stagePage(
  ctx: ScopeContext,
  batch: UsageBatch,
  source: PageSource,
  what: string,
  query: Record<string, string | number | readonly string[] | undefined>,
): Promise<ReadPage> {
  // A programs page goes ahead of frameworks pages: the next programs page and the frameworks requests of
  // its programs wait on it, nothing waits on a frameworks page. So that frameworks pages do not then come
  // in faster than they are staged, at most PAGES_IN_HAND of them are held at once, from request to staged.
  const chained = source !== 'v2_frameworks';
  const release = chained ? holdsNoSlot : await ctx.pagesInHand.acquire();
  try {
    const res = await ctx.client.getBody(CONSUMPTION_PATHS[source], query, {
      priority: chained ? 1 : 0,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    ctx.checkAbort();
    // Not `res` itself in what outlives the read: it holds the page's bytes.
    const answered = { requestId: res.requestId, path: res.path };
    let rows;
    try {
      // A frameworks page (up to 16 MB) is read on the page reader's thread: the chained pages, the
      // staging and the commits go on here meanwhile. A chained page is small and waited on: read here.
      rows = chained ? batch.read(source, res.body) : await batch.readOn(ctx.pageReader, source, res.body);
    } catch (err) {
      throw contentError(err, what, source, answered);
    }
    ctx.checkAbort();
    const staged = batch
      .stage(source, rows)
      .then(
        (loaded) => {
          collectPageGarbage();
          ctx.count(source, loaded.rows);
        },
        (err: unknown) => {
          throw contentError(err, what, source, answered);
        },
      )
      .finally(release);
    staged.catch(() => {
      // awaited by stagedInOrder; a page abandoned after a stop must not surface as unhandled
    });
    const ids =
      source === 'v2_frameworks' ? rows.frameworkIds.filter((id): id is string => id !== null) : rows.programIds;
    return {
      items: rows.items,
      cursor: rows.cursor,
      programIds: rows.programIds,
      ids,
      requestId: answered.requestId,
      staged,
    };
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * The pages of one paging, each yielded once read, with at most one page waiting to be staged: the
 * request for page k+1 goes out while page k is staged, so a cursor chain is not held up by the batch's
 * staging, and a page's staging error stops the paging at the next page.
 */
export async function* stagedInOrder<P extends { staged: Promise<void> }>(pages: AsyncIterable<P>): AsyncGenerator<P> {
  let waiting: Promise<void> | undefined;
  for await (const page of pages) {
    await waiting;
    waiting = page.staged;
    yield page;
  }
  await waiting;
}

/** What the API's content causes, as the API's fault (ResponseFormatError); anything else (memory, disk) as it is. */
function contentError(
  err: unknown,
  what: string,
  source: PageSource,
  res: { requestId: string; path: string },
): unknown {
  if (err instanceof PageContentError) {
    return new ResponseFormatError(
      `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): a "${leafName(err.offence.path)}" ` +
        `is missing or not of the documented type at ${err.offence.path}: ${err.offence.problem}. Nothing of this scope was changed; re-run later, and if it persists report the request id.`,
      res.requestId,
      res.path,
    );
  }
  const raw = (err as Error).message.split('\n')[0] ?? '';
  if (!/^(Conversion|Constraint|Invalid Input) Error/.test(raw)) return err;
  const missing = /NOT NULL constraint failed: staging_\w+\.(\w+)/.exec(raw)?.[1];
  const why = missing ? `a "${missing}" is missing or not of the documented type` : raw;
  return new ResponseFormatError(
    `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): ${why}`,
    res.requestId,
    res.path,
  );
}

/** The key a JSON path ends in: `$.programs[1].periods[0].period_start` -> period_start. */
function leafName(path: string): string {
  return /\.(\w+)(\[\d+\])?$/.exec(path)?.[1] ?? path;
}
