// A batch's plan periods, numbered once each, so that a staged row carries a small integer rather than
// the period's id, plan and times (staging_periods holds them once).
import { int64, type Int64 } from '../page/pageRows.js';

/** A plan period as reported, numbered within one batch (staging_periods). */
export interface StagedPeriod {
  local: number;
  id: string;
  plan: string;
  /** Microseconds since the epoch. */
  start: Int64;
  end: Int64 | null;
}

/** The batch's plan periods, numbered in the order they are first staged. */
export class PeriodBook {
  readonly periods: StagedPeriod[] = [];
  private readonly byKey = new Map<string, StagedPeriod>();
  /** Periods not yet written to staging_periods. */
  fresh: StagedPeriod[] = [];

  fromDate(d: Date): Int64 {
    const ms = d.getTime();
    if (!Number.isFinite(ms)) throw new RangeError('invalid Date (NaN) where a timestamp was expected');
    return int64(BigInt(ms) * 1000n);
  }

  period(id: string, plan: string, start: Int64, end: Int64 | null): number {
    const key = `${id}\u0000${plan}\u0000${start}\u0000${end ?? ''}`;
    let p = this.byKey.get(key);
    if (p === undefined) {
      p = { local: this.periods.length, id, plan, start, end };
      this.periods.push(p);
      this.fresh.push(p);
      this.byKey.set(key, p);
    }
    return p.local;
  }
}
