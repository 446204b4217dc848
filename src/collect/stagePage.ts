// One consumption page fetched as text and staged in its batch; DuckDB's errors on its content told apart
// from ours (the API answering nonsense vs memory or disk).
import { ResponseFormatError } from '../api/errors.js';
import { CONSUMPTION_PATHS } from '../contract/api.js';
import { collectPageGarbage } from '../heap.js';
import { PageContentError, type UsageBatch } from '../store/store.js';
import type { PageSource } from '../store/types.js';
import type { ScopeContext } from './scope.js';

/**
 * Fetches one consumption page as text and stages it in the batch, where DuckDB's JSON reader parses
 * it. A body DuckDB cannot read as the documented shape is the API answering nonsense: reported with
 * the request id, and the batch is not committed.
 */
export async function stagePage(
  ctx: ScopeContext,
  batch: UsageBatch,
  source: PageSource,
  what: string,
  query: Record<string, string | number | readonly string[] | undefined>,
) {
  const res = await ctx.client.getText(CONSUMPTION_PATHS[source], query, ctx.signal ? { signal: ctx.signal } : {});
  ctx.checkAbort();
  try {
    const loaded = await batch.appendPage(source, res.text);
    collectPageGarbage();
    ctx.count(source, loaded.rows);
    return { ...loaded, requestId: res.requestId };
  } catch (err) {
    if (err instanceof PageContentError) {
      throw new ResponseFormatError(
        `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): a "${leafName(err.offence.path)}" ` +
          `is missing or not of the documented type at ${err.offence.path}: ${err.offence.problem}. Nothing of this scope was changed; re-run later, and if it persists report the request id.`,
        res.requestId,
        res.path,
      );
    }
    const raw = (err as Error).message.split('\n')[0] ?? '';
    // Only what the page's content causes is the API's fault; anything else (memory, disk) is ours.
    if (!/^(Conversion|Constraint|Invalid Input) Error/.test(raw)) throw err;
    const missing = /NOT NULL constraint failed: staging_usage\.(\w+)/.exec(raw)?.[1];
    const why = missing ? `a "${missing}" is missing or not of the documented type` : raw;
    throw new ResponseFormatError(
      `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): ${why}`,
      res.requestId,
      res.path,
    );
  }
}

/** The key a JSON path ends in: `$.programs[1].periods[0].period_start` -> period_start. */
function leafName(path: string): string {
  return /\.(\w+)(\[\d+\])?$/.exec(path)?.[1] ?? path;
}
