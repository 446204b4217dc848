// Retention (`prune`, [store.retention]): hourly usage older than a cutoff, what the dataset holds of it,
// and its removal with the coverage that described it, recorded in usage_removals under the prune's
// run. Daily and monthly usage is never touched: every statement here names granularity 'hourly'.
import type { StoreContext } from './context.js';

export type BucketTable = 'usage_program_buckets' | 'usage_framework_buckets';
export const BUCKET_TABLES: readonly BucketTable[] = ['usage_program_buckets', 'usage_framework_buckets'];

// Parameters: $cutoff TIMESTAMPTZ. The UTC days of hourly rows before the cutoff, per table.
const HOURLY_DAYS_BEFORE: Record<BucketTable, string> = {
  usage_program_buckets: `SELECT strftime(timezone('UTC', timeframe_start), '%Y-%m-%d') AS day, count(*) AS n
FROM usage_program_buckets WHERE granularity = 'hourly' AND timeframe_start < $cutoff GROUP BY 1 ORDER BY 1`,
  usage_framework_buckets: `SELECT strftime(timezone('UTC', timeframe_start), '%Y-%m-%d') AS day, count(*) AS n
FROM usage_framework_buckets WHERE granularity = 'hourly' AND timeframe_start < $cutoff GROUP BY 1 ORDER BY 1`,
};

// Parameters: $cutoff TIMESTAMPTZ.
const HOURLY_DELETE: Record<BucketTable, string> = {
  usage_program_buckets: `DELETE FROM usage_program_buckets WHERE granularity = 'hourly' AND timeframe_start < $cutoff`,
  usage_framework_buckets: `DELETE FROM usage_framework_buckets WHERE granularity = 'hourly' AND timeframe_start < $cutoff`,
};

// The hourly coverage before the cutoff goes with its rows (a report must not take those hours as
// collected); a window across the cutoff keeps its part after it. Parameters: $cutoff TIMESTAMPTZ.
const COVERAGE_DROP = `DELETE FROM coverage WHERE granularity = 'hourly' AND window_end <= $cutoff`;
const COVERAGE_TRIM = `UPDATE coverage SET window_start = $cutoff
WHERE granularity = 'hourly' AND window_start < $cutoff AND window_end > $cutoff`;

// Parameters: $run_id, $table_name, $range_start, $range_end, $rows, $removed_at.
const REMOVAL_RECORD = `INSERT INTO usage_removals (run_id, table_name, granularity, range_start, range_end, rows, removed_at)
VALUES ($run_id, $table_name, 'hourly', $range_start, $range_end, $rows, $removed_at)`;

export interface HourlyDay {
  table: BucketTable;
  /** 'YYYY-MM-DD' (UTC). */
  day: string;
  /** Bucket rows. */
  rows: number;
}

/** The UTC days with hourly rows before `cutoff`, per table. */
export async function hourlyDaysBefore(cx: StoreContext, cutoff: Date): Promise<HourlyDay[]> {
  const out: HourlyDay[] = [];
  for (const table of BUCKET_TABLES) {
    for (const r of await cx.sql.query<{ day: string; n: bigint }>(HOURLY_DAYS_BEFORE[table], { cutoff })) out.push({ table, day: r.day, rows: Number(r.n) });
  }
  return out;
}

export interface Removal {
  table: BucketTable;
  from: Date;
  to: Date;
  rows: number;
}

/** Removes the hourly rows before `cutoff` and their coverage in one transaction, recorded under `runId`. */
export async function removeHourlyBefore(cx: StoreContext, runId: string, cutoff: Date, days: HourlyDay[]): Promise<Removal[]> {
  return cx.transaction(async () => {
    const out: Removal[] = [];
    for (const table of BUCKET_TABLES) {
      const mine = days.filter((d) => d.table === table);
      if (mine.length === 0) continue;
      const rows = await cx.exec(HOURLY_DELETE[table], { cutoff });
      const from = new Date(`${mine[0]!.day}T00:00:00Z`);
      await cx.sql.run(REMOVAL_RECORD, { run_id: runId, table_name: table, range_start: from, range_end: cutoff, rows: BigInt(rows), removed_at: cx.now() });
      out.push({ table, from, to: cutoff, rows });
    }
    await cx.exec(COVERAGE_DROP, { cutoff });
    await cx.exec(COVERAGE_TRIM, { cutoff });
    return out;
  });
}
