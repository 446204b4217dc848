// Which programs go into one frameworks request. A request names at most MAX_PROGRAM_IDS programs and
// pages through their frameworks; when the frameworks of a request fill its last page exactly, the API
// may still hand back a cursor, and the request costs one more (empty) page. With the framework counts
// the store knows (the inventory's, and the frameworks its usage names: fetchers.ts FrameworkQueue), a
// request is cut one program short of an exact multiple of the page size, and the programs left over
// start the next request. The counts are estimates: the cursor still decides when paging ends, so a stale
// count costs at most that one page.

/**
 * How many of `counts` (known frameworks per program, in the order the programs are to be asked) the
 * next request takes: as many as `maxIds` allows, fewer when their frameworks would fill the last page
 * exactly. Returns 0 when `final` is false and fewer than `maxIds` programs are waiting (more may come).
 */
export function nextBatchSize(counts: readonly number[], pageSize: number, maxIds: number, final: boolean): number {
  if (counts.length === 0 || (!final && counts.length < maxIds)) return 0;
  let n = Math.min(maxIds, counts.length);
  let total = 0;
  for (let i = 0; i < n; i++) total += counts[i]!;
  // Never below one program: a single program whose frameworks fill pages exactly cannot be split.
  while (n > 1 && total > 0 && total % pageSize === 0) total -= counts[--n]!;
  return n;
}
