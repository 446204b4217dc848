// Everything a page's rows say, as plain data: what the page tests compare between two ways of reading.
import type { PageRows } from '../../src/page/pageRows.js';

export function pageContents(p: PageRows) {
  const rows = [];
  for (let r = 0; r < p.rows; r++) {
    const metrics = [];
    for (let m = 0; m < p.width; m++) metrics.push(p.metric(r, m));
    rows.push({ item: p.rowItem[r], period: p.rowPeriod[r], start: p.start(r), end: p.end(r), metrics });
  }
  return {
    items: p.items,
    cursor: p.cursor,
    programIds: p.programIds,
    frameworkIds: p.frameworkIds,
    periods: p.periodIds.map((id, i) => [id, p.periodPlans[i], p.periodStarts[i], p.periodEnds[i]]),
    values: p.values,
    rows,
  };
}
