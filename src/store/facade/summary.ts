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

// Stored bucket rows per fact table, for status. Parameters: none. An unfiltered count(*) reads row
// group sizes only, never a column, so its cost does not follow the history kept (a count of values
// through the long views, as usage_summary.sql does, reads every row).
const USAGE_ROW_COUNTS_SQL = `
SELECT (SELECT count(*) FROM usage_program_buckets) AS usage_program,
       (SELECT count(*) FROM usage_framework_buckets) AS usage_framework;`;

/** Stored rows (one per bucket: a program or framework, period and time bucket) per fact table. */
export async function usageRowCounts(cx: StoreContext): Promise<{ usage_program: number; usage_framework: number }> {
  const [row] = await cx.sql.query<Record<string, bigint | number>>(USAGE_ROW_COUNTS_SQL);
  return { usage_program: num(row?.usage_program), usage_framework: num(row?.usage_framework) };
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
