// The usage topic (Store.usage): batches of usage pages (usageBatch.ts stages and commits them), what
// `status` shows of the fact tables, the frameworks the stored usage names per program (the collector
// sizes its frameworks requests by them), and retention (`prune`, [store.retention]): hourly usage older
// than a cutoff removed with the coverage that described it, recorded in usage_removals under the
// prune's run. Daily and monthly usage is never removed: every retention statement names granularity
// 'hourly'.
import { lastDayBefore, MARK_HOURLY_THROUGH_DIRTY_SQL } from '../analystParts.js';
import { rebuildCoverageScopes } from '../coverageSql.js';
import { ROW_COUNT_ADD_SQL, ROW_COUNTS_SQL } from '../rowCounts.js';
import { readSql } from '../sql.js';
import type { UsageBatch, UsageBatchSpec, UsageSummaryRow } from '../types.js';
import { StagedUsageBatch, type BatchHost } from '../usageBatch.js';
import { num, type StoreContext } from './context.js';

// Parameters: $org_id VARCHAR, $granularity VARCHAR, $window_start TIMESTAMPTZ. Per program of the
// organization, the distinct frameworks with a bucket of the window's granularity starting at or after
// $window_start: each existed after the window's start, so the frameworks endpoint lists it for that window
// (it lists the live frameworks and those deleted after the window's start). One seen only earlier may have
// been deleted before it, so earlier buckets are not counted. A lower bound: frameworks created since, or
// without usage, are missing. One query per scope rather than per programs page. The window's own
// granularity keeps the scan to the window: a monthly window starts a month or more back, and the hourly
// rows since then (any granularity counted them) are a scan that grew with the history kept, to 5.2 s at
// 91 days where the monthly rows alone take 0.13 s, with the same counts (decision log, "Frameworks counted
// at the window's own granularity").
const USAGE_FRAMEWORK_COUNT_BY_PROGRAM_SQL = `
SELECT program_id, count(DISTINCT framework_id) AS frameworks
FROM usage_framework_buckets
WHERE org_id = $org_id AND granularity = $granularity AND timeframe_start >= $window_start
GROUP BY program_id;`;

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
// collected); a window across the cutoff keeps its part after it, and the hourly scopes' summaries are
// recomputed after both (prune is rare; a trimmed start can change a scope's span and order). Parameters:
// $cutoff TIMESTAMPTZ.
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

export interface Removal {
  table: BucketTable;
  from: Date;
  to: Date;
  rows: number;
}

/** What the usage topic needs from the Store to open batches (its DuckDB instance, page slots, threads). */
export interface BatchFactory {
  host: Omit<BatchHost, 'batchClosed'>;
  assertOpen(): void;
  /** The store's open batches (aborted when it closes). */
  open: Set<UsageBatch>;
}

/** Usage batches, counts and retention (Store.usage). */
export class Usage {
  /** @internal Created by the Store. */
  constructor(
    private readonly cx: StoreContext,
    private readonly batches: BatchFactory,
  ) {}

  /** A batch that stages rows and replaces exactly its window and scope when committed. */
  beginBatch(spec: UsageBatchSpec): UsageBatch {
    this.batches.assertOpen();
    const open = this.batches.open;
    const batch = new StagedUsageBatch({ ...this.batches.host, batchClosed: (b) => open.delete(b) }, spec);
    open.add(batch);
    return batch;
  }

  /** Stored rows (one per bucket: a program or framework, period and time bucket) per fact table, as kept
   *  in usage_row_counts (an unfiltered count(*) reads every row group's metadata, more as history grows). */
  async rowCounts(): Promise<{ usage_program: number; usage_framework: number }> {
    const rows = await this.cx.sql.query<{ table_name: string; row_count: bigint }>(ROW_COUNTS_SQL);
    const of = (t: BucketTable) => num(rows.find((r) => r.table_name === t)?.row_count);
    return { usage_program: of('usage_program_buckets'), usage_framework: of('usage_framework_buckets') };
  }

  /** Row counts and time span of the fact tables, per table, api version and granularity. */
  async summary(): Promise<UsageSummaryRow[]> {
    const rows = await this.cx.sql.query(readSql('src/store/sql/usage_summary.sql'));
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

  /** Frameworks with usage at a granularity since windowStart, per program of one organization (programs
   *  with none have no entry). */
  async frameworksByProgram(orgId: string, granularity: string, windowStart: Date): Promise<Map<string, number>> {
    const rows = await this.cx.sql.query<{ program_id: string; frameworks: bigint }>(
      USAGE_FRAMEWORK_COUNT_BY_PROGRAM_SQL,
      { org_id: orgId, granularity, window_start: windowStart },
    );
    return new Map(rows.map((r) => [r.program_id, num(r.frameworks)]));
  }

  /** The UTC days with hourly rows before `cutoff`, per table. */
  async hourlyDaysBefore(cutoff: Date): Promise<HourlyDay[]> {
    const out: HourlyDay[] = [];
    for (const table of BUCKET_TABLES) {
      for (const r of await this.cx.sql.query<{ day: string; n: bigint }>(HOURLY_DAYS_BEFORE[table], { cutoff }))
        out.push({ table, day: r.day, rows: Number(r.n) });
    }
    return out;
  }

  /** Removes the hourly rows before `cutoff` and their coverage in one transaction, recorded under `runId`. */
  async removeHourlyBefore(runId: string, cutoff: Date, days: HourlyDay[]): Promise<Removal[]> {
    return this.cx.transaction(async () => {
      const out: Removal[] = [];
      for (const table of BUCKET_TABLES) {
        const mine = days.filter((d) => d.table === table);
        if (mine.length === 0) continue;
        const rows = await this.cx.exec(HOURLY_DELETE[table], { cutoff });
        await this.cx.sql.run(ROW_COUNT_ADD_SQL, { table_name: table, delta: BigInt(-rows) });
        const from = new Date(`${mine[0]!.day}T00:00:00Z`);
        await this.cx.sql.run(REMOVAL_RECORD, {
          run_id: runId,
          table_name: table,
          range_start: from,
          range_end: cutoff,
          rows: BigInt(rows),
          removed_at: this.cx.now(),
        });
        out.push({ table, from, to: cutoff, rows });
      }
      await this.cx.exec(COVERAGE_DROP, { cutoff });
      await this.cx.exec(MARK_HOURLY_THROUGH_DIRTY_SQL, { through: lastDayBefore(cutoff) });
      await this.cx.exec(COVERAGE_TRIM, { cutoff });
      await rebuildCoverageScopes(this.cx.conn, { granularity: 'hourly' });
      return out;
    });
  }
}
