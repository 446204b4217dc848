// Cursor paging as a small named strategy: the API's cursor is the id of the last item, and the last
// page either has no `pagination` key or a cursor that yields an empty page (ARCHITECTURE.md, "API facts"). An async
// generator, so a caller holds one page at a time.
import { ResponseFormatError } from '../api/errors.js';

/** What paging needs to know of a page, however it was read. */
export interface PageInfo {
  /** Items on the page; null when the body had no items array (the API answered something else). */
  items: number | null;
  cursor: string | null;
  requestId: string;
  /** The ids of the page's items (programs on a programs page, frameworks on a frameworks page), when known:
   *  an id that comes again in one query's pages proves a runaway cursor (cursorPages). */
  ids?: readonly string[];
}

export interface CursorPagingOptions {
  /** The array of items in the body, e.g. 'programs' or 'frameworks' (for messages). */
  itemsKey: string;
  /** The page size asked for: a shorter page is the last one, so no request is spent on an empty page. */
  limit: number;
  /** What the request was, for error messages. */
  describe: string;
  /** The most pages the scope can justify, and why (for the message); beyond it paging stops with an error. */
  maxPages?: { pages: number; why: string };
  /** Resume from this cursor (a paging interrupted earlier) instead of the first page. */
  start?: string;
}

/** Pages a cursor-paginated endpoint until its end, guarding against cursors that would loop forever:
 *  a cursor seen before (a repeat or a cycle), an item id seen before (a cursor that hands back pages
 *  already given, under new cursors: stopped at the page that repeats, whatever the bound), or more pages
 *  than the scope can justify stops it. The next page is asked for as soon as a page's cursor is known
 *  and its ids are checked, before the caller has handled that page: a chain of pages waits on the API,
 *  not on the caller. */
export async function* cursorPages<P extends PageInfo>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  opts: CursorPagingOptions,
): AsyncGenerator<P> {
  const sent = new Set<string>();
  /** Every item id of this query's pages so far, with the page it came on. */
  const ids = new Map<string, number>();
  let cursor: string | undefined = opts.start;
  let next: Promise<P> | undefined = askedAhead(fetchPage(cursor));
  for (let n = 1; next; n++) {
    const page: P = await next;
    next = undefined;
    if (page.items === null) {
      throw new ResponseFormatError(
        `${opts.describe}: expected an object with a "${opts.itemsKey}" array (request id ${page.requestId})`,
        page.requestId,
        opts.describe,
      );
    }
    checkIds(page, n, ids, opts);
    const following = page.cursor ?? undefined;
    // The end: no pagination key, an empty page, or a short page.
    const last = !following || page.items === 0 || page.items < opts.limit;
    let tooMany = false;
    if (!last) {
      if (sent.has(following) || following === cursor) {
        throw new ResponseFormatError(
          `${opts.describe}: the API returned cursor "${following}" a second time; stopping rather than looping. Re-run later; if it persists, report request id ${page.requestId}.`,
          page.requestId,
          opts.describe,
        );
      }
      sent.add(following);
      cursor = following;
      tooMany = opts.maxPages !== undefined && n + 1 > opts.maxPages.pages;
      if (!tooMany) next = askedAhead(fetchPage(cursor));
    }
    if (page.items > 0) yield page;
    if (tooMany) {
      throw new ResponseFormatError(
        `${opts.describe}: the API is still sending pages after ${opts.maxPages!.pages}, more than ${opts.maxPages!.why} can justify (last request id ${page.requestId}); ` +
          `stopping, nothing of this scope was changed. Re-run later; if it persists, report that request id.`,
        page.requestId,
        opts.describe,
      );
    }
  }
}

/** Refuses a page holding an id this query's pages gave before (or twice itself): the API is repeating itself. */
function checkIds(page: PageInfo, n: number, ids: Map<string, number>, opts: CursorPagingOptions): void {
  if (page.ids === undefined) return;
  for (const id of page.ids) {
    const first = ids.get(id);
    if (first !== undefined) {
      const where = first === n ? 'twice on that page' : `already on page ${first}`;
      throw new ResponseFormatError(
        `${opts.describe}: page ${n} of this query (request id ${page.requestId}) holds ${opts.itemsKey.replace(/s$/, '')} ${id}, ${where}: ` +
          `a cursor that runs away or a listing that repeats itself; stopping, nothing of this scope was changed. Re-run later; if it persists, report that request id.`,
        page.requestId,
        opts.describe,
      );
    }
    ids.set(id, n);
  }
}

/** A page asked for before it is awaited: it may fail while the caller still handles the page before (a stop
 *  aborts it), or never be awaited (the caller stopped): marked handled so that neither is an unhandled
 *  rejection, which would end the process; awaiting it still throws. */
function askedAhead<P>(page: Promise<P>): Promise<P> {
  page.catch(() => {
    // see above: the caller awaits the page itself
  });
  return page;
}

/** A JSON page read in JavaScript (the listing endpoints): its items and cursor. */
export function jsonPage<T>(body: unknown, itemsKey: string, requestId: string): PageInfo & { list: T[] } {
  const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const list = Array.isArray(b[itemsKey]) ? (b[itemsKey] as T[]) : null;
  const p = b.pagination;
  const c = p && typeof p === 'object' ? (p as Record<string, unknown>).cursor : undefined;
  return {
    items: list ? list.length : null,
    cursor: typeof c === 'string' && c.length > 0 ? c : null,
    requestId,
    list: list ?? [],
  };
}
