// Coverage: which windows of each source, granularity and scope are collected (a recorded failure
// keeps the data of an earlier complete row), summarised for the planner and `status`.
import type { CoverageStatus } from '../../domain/status.js';
import { writeCoverageRow } from '../coverageSql.js';
import type { CoverageRow, CoverageSummaryRow } from '../types.js';
import { num, type StoreContext } from './context.js';

// Parameters: none. The kept summary per scope (migration 021), in the order status shows it.
const COVERAGE_SUMMARY_SQL = `
SELECT source, granularity, scope, first_complete_start, last_complete_end, last_data_end, complete_windows,
       last_collected_at, last_complete_collected_at, last_status, last_detail, last_run_id
FROM coverage_by_scope ORDER BY source, granularity, scope;`;

// Parameters: $source VARCHAR, $granularity VARCHAR, $by_scope BOOLEAN, $scope VARCHAR. The end
// (exclusive) of the latest complete window, for one scope or across all scopes.
const COVERAGE_LATEST_COMPLETE_END_SQL = `
SELECT max(last_complete_end) AS window_end
FROM coverage_by_scope
WHERE source = $source AND granularity = $granularity AND (NOT $by_scope OR scope = $scope);`;

/** Coverage of the collected windows (Store.coverage). */
export class Coverage {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** A coverage row without data: for not_eligible and failed scopes. Replaces the same window's row. */
  async record(c: CoverageRow): Promise<void> {
    await this.cx.transaction(() => writeCoverageRow(this.cx.conn, c));
  }

  /** Per source, granularity and scope: the complete span, the last attempt and its status (for the planner and `status`). */
  async summary(): Promise<CoverageSummaryRow[]> {
    const rows = await this.cx.sql.query(COVERAGE_SUMMARY_SQL);
    return rows.map((r) => ({
      source: r.source as string,
      granularity: r.granularity as string,
      scope: r.scope as string,
      firstCompleteStart: (r.first_complete_start as Date | null) ?? null,
      lastCompleteEnd: (r.last_complete_end as Date | null) ?? null,
      lastDataEnd: (r.last_data_end as Date | null) ?? null,
      completeWindows: num(r.complete_windows),
      lastCollectedAt: r.last_collected_at as Date,
      lastCompleteCollectedAt: (r.last_complete_collected_at as Date | null) ?? null,
      lastStatus: r.last_status as CoverageStatus,
      lastDetail: (r.last_detail as string | null) ?? null,
      lastRunId: r.last_run_id as string,
    }));
  }

  /**
   * The end (exclusive) of the latest complete window of a source and granularity, for one scope or,
   * without scope, the latest across all scopes (a failed scope does not hold it back: check
   * coverage.summary for those). null when nothing is complete yet.
   */
  async latestCompleteEnd(source: string, granularity: string, scope?: string): Promise<Date | null> {
    const [row] = await this.cx.sql.query<{ window_end: Date | null }>(COVERAGE_LATEST_COMPLETE_END_SQL, {
      source,
      granularity,
      by_scope: scope !== undefined,
      scope: scope ?? null,
    });
    return row?.window_end ?? null;
  }
}
