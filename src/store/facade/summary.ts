// What `status` shows of the data: rows in the dimension tables and the fact tables' spans.
import { readSql } from '../sql.js';
import type { UsageSummaryRow } from '../types.js';
import { num, type StoreContext } from './context.js';

// Rows in the dimension tables, for status. Parameters: none.
const DIMENSION_COUNTS_SQL = `
SELECT (SELECT count(*) FROM programs) AS programs,
       (SELECT count(*) FROM frameworks) AS frameworks,
       (SELECT count(*) FROM snapshots) AS snapshots;`;

/** Rows in the dimension tables, for `status`. */
export async function dimensionCounts(cx: StoreContext): Promise<{ programs: number; frameworks: number; snapshots: number }> {
  const [row] = await cx.sql.query<Record<string, bigint | number>>(DIMENSION_COUNTS_SQL);
  const n = (k: string) => Number(row?.[k] ?? 0);
  return { programs: n('programs'), frameworks: n('frameworks'), snapshots: n('snapshots') };
}

/** Row counts and time span of the fact tables, per table, api version and granularity. */
export async function usageSummary(cx: StoreContext): Promise<UsageSummaryRow[]> {
  const rows = await cx.sql.query(readSql('src/store/sql/usage_summary.sql'));
  return rows.map((r) => ({
    table: r.table_name as UsageSummaryRow['table'],
    apiVersion: (r.api_version as string | null) ?? null,
    granularity: r.granularity as string,
    rows: num(r.rows),
    firstStart: (r.first_start as Date | null) ?? null,
    lastEnd: (r.last_end as Date | null) ?? null,
    lastCollectedAt: (r.last_collected_at as Date | null) ?? null,
  }));
}
