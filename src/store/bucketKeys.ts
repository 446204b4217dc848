// Which ids a batch's duplicate check at commit must look at, found while the rows are staged.
import type { Int64 } from '../page/pageRows.js';
import type { PeriodBook } from './periodBook.js';

/**
 * The ids whose rows could hold a bucket key (id, period_id, timeframe_start) more than once in a batch,
 * found as rows are written, so that the batch's duplicate check (staging_usage_duplicate_*.sql) groups
 * only their rows, not the whole staging table: that aggregate was the commit's largest memory
 * (BENCHMARKS.md, "Issue 13: the collector's memory"). Conservative: an id is a suspect when its rows
 * come in two runs (on two pages, or two items of one page), when a period id comes back within its
 * run, or when a period's timeframes do not strictly increase. The SQL decides; a suspect is not a
 * duplicate. An API that lists each item's buckets once, in order, leaves no suspect.
 */
export class BucketKeys {
  readonly suspects = new Set<string>();
  private readonly seen = new Set<string>();
  private id: string | undefined;
  private periodId: string | undefined;
  private readonly runPeriods = new Set<string>();
  private lastStart: Int64 = -1;

  constructor(private readonly book: PeriodBook) {}

  see(id: string, period: number, start: Int64): void {
    if (id !== this.id) {
      if (this.seen.has(id)) this.suspects.add(id);
      else this.seen.add(id);
      this.id = id;
      this.periodId = undefined;
      this.runPeriods.clear();
    }
    const periodId = this.book.periods[period]!.id;
    if (periodId !== this.periodId) {
      if (this.runPeriods.has(periodId)) this.suspects.add(id);
      this.runPeriods.add(periodId);
      this.periodId = periodId;
      this.lastStart = -1n << 63n;
    }
    if (start <= this.lastStart) this.suspects.add(id);
    this.lastStart = start;
  }
}
