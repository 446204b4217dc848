// The dataset export's side of the store: its file units (store/dataset.ts), the windows changed since
// a folder's last export, one unit fingerprinted, staged and copied, and the record of what each export
// wrote (tables export_partitions, export_runs, export_datasets), per dataset folder.
import {
  CHANGED_WINDOWS_SQL_FILE,
  copyPartitionSql,
  DATASET_UNITS_SQL_FILE,
  DROP_STAGED_PARTITION,
  fingerprintSql,
  MONTH_RUN_IDS,
  NAMES_DIGEST_SQL,
  partitionParams,
  PRICES_DIGEST_SQL,
  SPEND_MONTH_GRANULARITY_SQL,
  SPEND_MONTH_ROWS_SQL_FILE,
  SPEND_MONTH_STEPS,
  SPEND_MONTHS_SQL,
  dropSpendMonthStepSql,
  spendMonthStageSql,
  spendMonthStepSql,
  stagePartitionSql,
  SPEND_PRICED_FROM_SQL,
  stagedFingerprintSql,
  STAGED_RUN_IDS,
  unitRange,
  type ChangedWindow,
  type DatasetFingerprint,
  type DatasetPartitionKey,
  type DatasetStream,
  type UsageStream,
} from '../dataset.js';
import { V2_FRAMEWORK_METRICS } from '../../contract/api.js';
import { readSql } from '../sql.js';
import type { StoreContext } from './context.js';

const EXPORTED_LIST = 'SELECT partition, fingerprint FROM export_partitions WHERE dataset_dir = $dir';

const EXPORTED_RECORD = `INSERT OR REPLACE INTO export_partitions
  (dataset_dir, partition, fingerprint, n_rows, sha256, exported_at, pricing_digest)
VALUES ($dir, $partition, $fingerprint, $n_rows, $sha256, $exported_at, $pricing_digest)`;

const PRICING_DIGEST_OF =
  'SELECT pricing_digest FROM export_partitions WHERE dataset_dir = $dir AND partition = $partition';

const PRICING_DIGEST_RECORD =
  'UPDATE export_partitions SET pricing_digest = $pricing_digest WHERE dataset_dir = $dir AND partition = $partition';

const EXPORTED_ROWS = 'SELECT coalesce(sum(n_rows), 0) AS n FROM export_partitions WHERE dataset_dir = $dir';

const EXPORTED_FORGET = 'DELETE FROM export_partitions WHERE dataset_dir = $dir AND partition = $partition';

const DATASET_STATE = 'SELECT layout, context_digest FROM export_datasets WHERE dataset_dir = $dir';

const DATASET_STATE_RECORD =
  'INSERT OR REPLACE INTO export_datasets VALUES ($dir, $layout, $context_digest, $exported_at)';

// The runs a folder has not taken in yet are all marked at once, at the end of an export.
const RUNS_TAKEN_IN = `INSERT OR IGNORE INTO export_runs
SELECT $dir, run_id FROM collection_runs ANTI JOIN (SELECT run_id FROM export_runs WHERE dataset_dir = $dir) e USING (run_id)`;

const RUNS_PENDING = `SELECT count(*) AS n FROM collection_runs
ANTI JOIN (SELECT run_id FROM export_runs WHERE dataset_dir = $dir) e USING (run_id)`;

type FingerprintRow = { n_rows: bigint; digest: string; pricing?: string };
const fingerprintOfRow = ([r]: FingerprintRow[]): DatasetFingerprint => ({
  rows: r?.n_rows ?? 0n,
  digest: r?.digest ?? '',
  ...(r?.pricing !== undefined ? { pricing: r.pricing } : {}),
});

export interface DatasetState {
  layout: string;
  contextDigest: string;
}

/** The dataset export's side of the store (Store.dataset). */
export class DatasetExports {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** The units the last exports wrote into the dataset at `dir` (absolute), with their fingerprints. */
  async exportedPartitions(dir: string): Promise<Map<string, string>> {
    const rows = await this.cx.sql.query<{ partition: string; fingerprint: string }>(EXPORTED_LIST, { dir });
    return new Map(rows.map((r) => [r.partition, r.fingerprint]));
  }

  /** Records one unit written into the dataset at `dir`, with its fingerprint, rows, sha256 and (usage
   *  and spend) pricing digest. */
  async recordExportedPartition(r: {
    dir: string;
    partition: string;
    fingerprint: string;
    rows: number;
    sha256: string;
    exportedAt: Date;
    pricingDigest?: string;
  }): Promise<void> {
    await this.cx.sql.run(EXPORTED_RECORD, {
      dir: r.dir,
      partition: r.partition,
      fingerprint: r.fingerprint,
      n_rows: BigInt(r.rows),
      sha256: r.sha256,
      exported_at: r.exportedAt,
      pricing_digest: r.pricingDigest ?? null,
    });
  }

  /** A recorded unit's pricing digest (undefined when none is recorded). */
  async pricingDigest(dir: string, partition: string): Promise<string | undefined> {
    const [r] = await this.cx.sql.query<{ pricing_digest: string | null }>(PRICING_DIGEST_OF, { dir, partition });
    return r?.pricing_digest ?? undefined;
  }

  /** A spend month found priced from the same as its file's rows: its record says so. */
  async recordPricingDigest(dir: string, partition: string, pricingDigest: string): Promise<void> {
    await this.cx.sql.run(PRICING_DIGEST_RECORD, { dir, partition, pricing_digest: pricingDigest });
  }

  /** What a spend_daily month 'YYYY-MM' is priced from, for the folder at `dir` (SPEND_PRICED_FROM_SQL);
   *  `context` is the folder's digest of prices and names. */
  async spendPricedFrom(dir: string, month: string, context: string): Promise<string> {
    const [r] = await this.cx.sql.query<{ digest: string }>(SPEND_PRICED_FROM_SQL, {
      dir,
      month,
      context,
      ...unitRange(month),
    });
    return r?.digest ?? '';
  }

  /** The rows the folder's recorded files hold. */
  async exportedRows(dir: string): Promise<number> {
    const [r] = await this.cx.sql.query<{ n: bigint }>(EXPORTED_ROWS, { dir });
    return Number(r?.n ?? 0);
  }

  /** A unit that no longer has rows, or a record of an earlier layout. */
  async forgetExportedPartition(dir: string, partition: string): Promise<void> {
    await this.cx.sql.run(EXPORTED_FORGET, { dir, partition });
  }

  /** The folder's layout and context digest as its last export left them; undefined before the first. */
  async state(dir: string): Promise<DatasetState | undefined> {
    const [r] = await this.cx.sql.query<{ layout: string; context_digest: string }>(DATASET_STATE, { dir });
    return r ? { layout: r.layout, contextDigest: r.context_digest } : undefined;
  }

  /** Ends an export: every run so far taken in, and the folder's layout and context recorded. */
  async recordExported(dir: string, s: DatasetState, at: Date): Promise<void> {
    await this.cx.transaction(async () => {
      await this.cx.sql.run(RUNS_TAKEN_IN, { dir });
      await this.cx.sql.run(DATASET_STATE_RECORD, {
        dir,
        layout: s.layout,
        context_digest: s.contextDigest,
        exported_at: at,
      });
    });
  }

  /** How many runs the folder has not taken in yet. */
  async runsPending(dir: string): Promise<number> {
    const [r] = await this.cx.sql.query<{ n: bigint }>(RUNS_PENDING, { dir });
    return Number(r?.n ?? 0);
  }

  /** The windows replaced or emptied since the folder's last export (run and coverage metadata only). */
  async changedWindows(dir: string): Promise<ChangedWindow[]> {
    type Row = { stream: UsageStream; granularity: string; window_start: Date; window_end: Date; removal: boolean };
    const rows = await this.cx.sql.query<Row>(readSql(CHANGED_WINDOWS_SQL_FILE), { dir });
    return rows.map((r) => ({
      stream: r.stream,
      granularity: r.granularity,
      start: r.window_start,
      end: r.window_end,
      removal: r.removal,
    }));
  }

  /** Every usage and spend unit that has rows (a full export); dimensions are not listed. */
  async units(): Promise<DatasetPartitionKey[]> {
    type Row = { stream: DatasetStream; granularity: string | null; month: string; day: string | null };
    const rows = await this.cx.sql.query<Row>(readSql(DATASET_UNITS_SQL_FILE));
    return rows.map((r) => ({
      stream: r.stream,
      month: r.month,
      ...(r.granularity !== null ? { granularity: r.granularity } : {}),
      ...(r.day !== null ? { day: r.day } : {}),
    }));
  }

  /** One unit's row count and digests, read where its rows are stored. */
  async fingerprint(p: DatasetPartitionKey): Promise<DatasetFingerprint> {
    return fingerprintOfRow(await this.cx.sql.query<FingerprintRow>(fingerprintSql(p.stream), partitionParams(p)));
  }

  /** The digest of the price tables, and with `names` that of the inventory columns the priced lines carry. */
  async contextDigest(names: boolean): Promise<{ prices: string; names?: string }> {
    const [p] = await this.cx.sql.query<{ digest: string }>(PRICES_DIGEST_SQL);
    if (!names) return { prices: p?.digest ?? '' };
    const [n] = await this.cx.sql.query<{ digest: string }>(NAMES_DIGEST_SQL);
    return { prices: p?.digest ?? '', names: n?.digest ?? '' };
  }

  /** The staged unit's row count and digests (`stream`: the unit's). */
  async stagedFingerprint(stream: DatasetStream): Promise<DatasetFingerprint> {
    return fingerprintOfRow(await this.cx.sql.query<FingerprintRow>(stagedFingerprintSql(stream)));
  }

  /** The billing months that have usage. */
  async spendMonths(): Promise<string[]> {
    return (await this.cx.sql.query<{ month: string }>(SPEND_MONTHS_SQL)).map((r) => r.month);
  }

  /** Stages one unit's rows in the TEMP table STAGED_PARTITION (replacing the previous one); returns
   *  the runs that wrote them (none for a dimension). */
  async stagePartition(p: DatasetPartitionKey): Promise<string[]> {
    if (p.stream === 'spend_daily') await this.stageSpendMonth(partitionParams(p));
    else await this.cx.sql.run(stagePartitionSql(p.stream), partitionParams(p));
    type Row = { run_ids: string[] | null };
    if (p.stream === 'usage_program' || p.stream === 'usage_framework') {
      const [r] = await this.cx.sql.query<Row>(STAGED_RUN_IDS);
      return r?.run_ids ?? [];
    }
    if (p.stream === 'spend_daily' && p.month !== undefined) {
      const [r] = await this.cx.sql.query<Row>(MONTH_RUN_IDS, unitRange(p.month));
      return r?.run_ids ?? [];
    }
    return [];
  }

  /** Stages a spend_daily month (parameters $from, $to) in the steps of SPEND_MONTH_STEPS, at its
   *  granularity alone. */
  private async stageSpendMonth(range: Record<string, unknown>): Promise<void> {
    const [g] = await this.cx.sql.query<{ granularity: string }>(SPEND_MONTH_GRANULARITY_SQL, range);
    const all: Record<string, unknown> = {
      ...range,
      granularity: g?.granularity ?? null,
      framework_metrics: [...V2_FRAMEWORK_METRICS],
    };
    const bound = (sql: string) => Object.fromEntries(Object.entries(all).filter(([k]) => sql.includes(`$${k}`)));
    try {
      for (const step of SPEND_MONTH_STEPS) {
        const sql = readSql(step.sqlPath);
        await this.cx.sql.run(spendMonthStepSql(step.table, sql), bound(sql));
      }
      const rows = readSql(SPEND_MONTH_ROWS_SQL_FILE);
      await this.cx.sql.run(spendMonthStageSql(rows), bound(rows));
    } finally {
      for (const step of SPEND_MONTH_STEPS) await this.cx.sql.run(dropSpendMonthStepSql(step.table));
    }
  }

  /** The staged unit as a Parquet file at `path`, in the stream's key order. */
  async copyStaged(stream: DatasetStream, path: string): Promise<void> {
    await this.cx.sql.run(copyPartitionSql(stream, path));
  }

  /** Drops the staged unit (TEMP table STAGED_PARTITION). */
  async dropStaged(): Promise<void> {
    await this.cx.sql.run(DROP_STAGED_PARTITION);
  }
}
