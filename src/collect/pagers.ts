// Cursor paging as a small named strategy: the API's cursor is the id of the last item, and the last
// page either has no `pagination` key or a cursor that yields an empty page (DESIGN.md). An async
// generator, so a caller holds one page at a time.
import { ResponseFormatError } from '../api/errors.js';

export interface FetchedPage {
  body: unknown;
  requestId: string;
}

export interface Page<T> {
  items: T[];
  requestId: string;
  index: number;
}

export interface CursorPagingOptions {
  /** The array of items in the body, e.g. 'programs' or 'frameworks'. */
  itemsKey: string;
  /** The page size asked for: a shorter page is the last one, so no request is spent on an empty page. */
  limit: number;
  /** What the request was, for error messages. */
  describe: string;
}

/** Pages a cursor-paginated endpoint until its end, guarding against cursors that would loop forever. */
export async function* cursorPages<T>(
  fetchPage: (cursor: string | undefined) => Promise<FetchedPage>,
  opts: CursorPagingOptions,
): AsyncGenerator<Page<T>> {
  const sent = new Set<string>();
  let cursor: string | undefined;
  for (let index = 0; ; index++) {
    const { body, requestId } = await fetchPage(cursor);
    if (!body || typeof body !== 'object' || !Array.isArray((body as Record<string, unknown>)[opts.itemsKey])) {
      throw new ResponseFormatError(
        `${opts.describe}: expected an object with a "${opts.itemsKey}" array, got ${preview(body)}`,
        requestId,
        opts.describe,
      );
    }
    const items = (body as Record<string, unknown>)[opts.itemsKey] as T[];
    const next = nextCursor(body as Record<string, unknown>);
    if (items.length > 0) yield { items, requestId, index };
    // The end: no pagination key, an empty page, or a short page.
    if (next === undefined || items.length === 0 || items.length < opts.limit) return;
    if (sent.has(next)) {
      throw new ResponseFormatError(
        `${opts.describe}: the API returned cursor "${next}" a second time; stopping rather than looping. Re-run later; if it persists, report request id ${requestId}.`,
        requestId,
        opts.describe,
      );
    }
    sent.add(next);
    cursor = next;
  }
}

function nextCursor(body: Record<string, unknown>): string | undefined {
  const p = body.pagination;
  if (!p || typeof p !== 'object') return undefined;
  const c = (p as Record<string, unknown>).cursor;
  return typeof c === 'string' && c.length > 0 ? c : undefined;
}

function preview(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x)) ?? String(v);
  } catch {
    s = String(v);
  }
  return s.length > 200 ? s.slice(0, 200) + '…' : s;
}
