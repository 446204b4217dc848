// The analyst copy's parted tables: the tables that grow with history are published as Parquet files
// beside the copy, one file per part (store/publish.ts), so that a publish rewrites only the parts a run
// changed. Every write to one of them marks the parts it touched in analyst_dirty, in its own transaction
// (migration 017): these are the statements and part keys those writers use.
/** How a parted table's rows are cut into parts. */
export type PartKind = 'buckets' | 'day' | 'finalization';

export const PARTED_TABLES = {
  usage_program_buckets: 'buckets',
  usage_framework_buckets: 'buckets',
  alert_priced_days: 'day',
  alert_program_days: 'day',
  report_finalized_lines: 'finalization',
  report_focus_finalized: 'finalization',
  // Created by the first finalisation (store/report/finalize.ts), one per finalised report table.
  report_finalized_program_spend: 'finalization',
  report_finalized_framework_spend: 'finalization',
  report_finalized_snapshot_storage: 'finalization',
  report_finalized_transfer: 'finalization',
  report_finalized_daily: 'finalization',
} as const satisfies Record<string, PartKind>;
export type PartedTable = keyof typeof PARTED_TABLES;
export const PARTED_TABLE_NAMES = Object.keys(PARTED_TABLES) as PartedTable[];

const DAY_MS = 86_400_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

/** The parts of a bucket table that a window [start, end) of one granularity falls in: hourly rows by UTC
 *  day ('hourly/2026-11-27'), daily and monthly rows by UTC month ('daily/2026-11'). */
export function bucketParts(granularity: string, start: Date, end: Date): string[] {
  const out = new Set<string>();
  const first = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate());
  if (granularity === 'hourly') {
    for (let t = first; t < end.getTime(); t += DAY_MS) out.add(`hourly/${isoDay(t)}`);
    return [...out];
  }
  const monthStart = (k: number) => Date.UTC(Math.floor(k / 12), k % 12, 1);
  for (let k = start.getUTCFullYear() * 12 + start.getUTCMonth(); monthStart(k) < end.getTime(); k++)
    out.add(`${granularity}/${isoDay(monthStart(k)).slice(0, 7)}`);
  return [...out];
}

// Parameters: $table_name VARCHAR, $parts VARCHAR[].
export const MARK_PARTS_DIRTY_SQL = 'INSERT INTO analyst_dirty SELECT $table_name, unnest($parts::VARCHAR[])';

// Parameters: $table_name VARCHAR. Every part of the table (it was emptied or rewritten whole).
export const MARK_TABLE_DIRTY_SQL = `INSERT INTO analyst_dirty VALUES ($table_name, '*')`;

// Parameters: none. The days of a priced-days fill (alert_fill_keys, store/alerts.ts), in both tables it writes.
export const MARK_FILL_DAYS_DIRTY_SQL = `INSERT INTO analyst_dirty
SELECT t.table_name, d.part FROM (SELECT DISTINCT CAST(usage_day AS VARCHAR) AS part FROM alert_fill_keys) d
CROSS JOIN (VALUES ('alert_priced_days'), ('alert_program_days')) t(table_name)`;

// Parameters: $through VARCHAR (YYYY-MM-DD). The published hourly parts up to that day (prune removed them).
export const MARK_HOURLY_THROUGH_DIRTY_SQL = `INSERT INTO analyst_dirty
SELECT table_name, part FROM analyst_parts
WHERE table_name IN ('usage_program_buckets', 'usage_framework_buckets') AND part > 'hourly/' AND part <= 'hourly/' || $through`;

/** The last UTC day with hours before `cutoff` (prune removes hourly rows before it). */
export function lastDayBefore(cutoff: Date): string {
  return isoDay(cutoff.getTime() - 1);
}

// Parameters: $id VARCHAR. A finalisation's rows (written once, never changed), in every table holding them.
export const MARK_FINALIZATION_DIRTY_SQL = `INSERT INTO analyst_dirty
SELECT table_name, $id FROM (VALUES ${PARTED_TABLE_NAMES.filter((t) => PARTED_TABLES[t] === 'finalization')
  .map((t) => `('${t}')`)
  .join(', ')}) t(table_name)`;
