// The dataset export's side of the store: its partitions (store/dataset.ts), one staged and copied,
// and the record of what each export wrote (table export_partitions), per dataset folder.
import {
  copyPartitionSql,
  DIMENSION_PARTITION_SQL,
  DROP_STAGED_PARTITION,
  PARTITIONS_SQL_FILE,
  partitionParams,
  stagePartitionSql,
  type DatasetPartition,
  type DatasetPartitionKey,
  type DimensionStream,
} from '../dataset.js';
import { readSql } from '../sql.js';
import type { StoreContext } from './context.js';

// The dataset export's record of what it wrote (table export_partitions), per dataset folder.
const EXPORTED_LIST = 'SELECT partition, fingerprint FROM export_partitions WHERE dataset_dir = $dir';

const EXPORTED_RECORD = 'INSERT OR REPLACE INTO export_partitions VALUES ($dir, $partition, $fingerprint, $n_rows, $sha256, $exported_at)';

const EXPORTED_FORGET = 'DELETE FROM export_partitions WHERE dataset_dir = $dir AND partition = $partition';

/** The partitions the last exports wrote into the dataset at `dir` (absolute), with their fingerprints. */
export async function exportedPartitions(cx: StoreContext, dir: string): Promise<Map<string, string>> {
  const rows = await cx.sql.query<{ partition: string; fingerprint: string }>(EXPORTED_LIST, { dir });
  return new Map(rows.map((r) => [r.partition, r.fingerprint]));
}

export async function recordExportedPartition(cx: StoreContext, r: { dir: string; partition: string; fingerprint: string; rows: number; sha256: string; exportedAt: Date }): Promise<void> {
  await cx.sql.run(EXPORTED_RECORD, { dir: r.dir, partition: r.partition, fingerprint: r.fingerprint, n_rows: BigInt(r.rows), sha256: r.sha256, exported_at: r.exportedAt });
}

/** A partition that no longer has rows. */
export async function forgetExportedPartition(cx: StoreContext, dir: string, partition: string): Promise<void> {
  await cx.sql.run(EXPORTED_FORGET, { dir, partition });
}

/** Every partition of the dataset (see dataset.ts), usage streams first; a dimension is listed even when empty. */
export async function datasetPartitions(cx: StoreContext): Promise<DatasetPartition[]> {
  type Row = { granularity?: string; month?: string; n_rows: bigint; digest: string | null; run_ids: string[] | null };
  const out: DatasetPartition[] = [];
  const add = (stream: DatasetPartition['stream'], r: Row) =>
    out.push({
      stream,
      ...(r.granularity !== undefined ? { granularity: r.granularity } : {}),
      ...(r.month !== undefined ? { month: r.month } : {}),
      rows: r.n_rows, digest: r.digest, runIds: r.run_ids ?? [],
    });
  for (const stream of ['usage_program', 'usage_framework', 'spend_daily'] as const) {
    for (const r of await cx.sql.query<Row>(readSql(PARTITIONS_SQL_FILE[stream]))) add(stream, r);
  }
  for (const stream of Object.keys(DIMENSION_PARTITION_SQL) as DimensionStream[]) {
    for (const r of await cx.sql.query<Row>(DIMENSION_PARTITION_SQL[stream])) add(stream, r);
  }
  return out;
}

/** Stages one partition's rows in the TEMP table STAGED_PARTITION (replacing the previous one). */
export async function stageDatasetPartition(cx: StoreContext, p: DatasetPartitionKey): Promise<void> {
  await cx.sql.run(stagePartitionSql(p.stream), partitionParams(p));
}

/** The staged partition as a Parquet file at `path`. */
export async function copyStagedPartition(cx: StoreContext, path: string): Promise<void> {
  await cx.sql.run(copyPartitionSql(path));
}

export async function dropStagedPartition(cx: StoreContext): Promise<void> {
  await cx.sql.run(DROP_STAGED_PARTITION);
}
