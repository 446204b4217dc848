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
 *  a cursor seen before (a repeat or a cycle) or more pages than the scope can justify stops it. */
export async function* cursorPages<P extends PageInfo>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  opts: CursorPagingOptions,
): AsyncGenerator<P> {
  const sent = new Set<string>();
  let cursor: string | undefined = opts.start;
  let lastRequestId = '';
  for (let n = 1; ; n++) {
    if (opts.maxPages && n > opts.maxPages.pages) {
      throw new ResponseFormatError(
        `${opts.describe}: the API is still sending pages after ${opts.maxPages.pages}, more than ${opts.maxPages.why} can justify (last request id ${lastRequestId}); ` +
          `stopping, nothing of this scope was changed. Re-run later; if it persists, report that request id.`,
        lastRequestId,
        opts.describe,
      );
    }
    const page = await fetchPage(cursor);
    lastRequestId = page.requestId;
    if (page.items === null) {
      throw new ResponseFormatError(
        `${opts.describe}: expected an object with a "${opts.itemsKey}" array (request id ${page.requestId})`,
        page.requestId,
        opts.describe,
      );
    }
    if (page.items > 0) yield page;
    const next = page.cursor ?? undefined;
    // The end: no pagination key, an empty page, or a short page.
    if (!next || page.items === 0 || page.items < opts.limit) return;
    if (sent.has(next) || next === cursor) {
      throw new ResponseFormatError(
        `${opts.describe}: the API returned cursor "${next}" a second time; stopping rather than looping. Re-run later; if it persists, report request id ${page.requestId}.`,
        page.requestId,
        opts.describe,
      );
    }
    sent.add(next);
    cursor = next;
  }
}

/** A JSON page read in JavaScript (the listing endpoints): its items and cursor. */
export function jsonPage<T>(body: unknown, itemsKey: string, requestId: string): PageInfo & { list: T[] } {
  const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const list = Array.isArray(b[itemsKey]) ? (b[itemsKey] as T[]) : null;
  const p = b.pagination;
  const c = p && typeof p === 'object' ? (p as Record<string, unknown>).cursor : undefined;
  return { items: list ? list.length : null, cursor: typeof c === 'string' && c.length > 0 ? c : null, requestId, list: list ?? [] };
}
