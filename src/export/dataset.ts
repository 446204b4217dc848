// `export --dataset DIR`: the collected usage, the dimensions and the priced daily lines as a
// Hive-partitioned Parquet dataset that DuckDB, Spark, Trino, Athena, BigQuery and pandas read
// without this tool:
//   DIR/usage_program/granularity=daily/month=2026-10/part-0.parquet
//   DIR/usage_framework/granularity=hourly/month=2026-10/part-0.parquet
//   DIR/spend_daily/month=2026-10/part-0.parquet
//   DIR/programs/part-0.parquet (frameworks, snapshots likewise)
// Each partition directory also holds _manifest.json (rows, sha256, the runs its rows came from);
// readers skip files starting with '_' or '.'. Incremental: a partition is rewritten only when the
// fingerprint of its rows (count, xor and sum of row hashes, over every column) differs from the one
// recorded in export_partitions for DIR, or a file is missing. Every file is written under a
// temporary dot-name and renamed, so a reader never sees half a file. With 'arrow', each partition is
// also written as Arrow IPC under DIR/_arrow/ (a separate tree, so Parquet readers never meet it).
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ExportFormat } from '../domain/formats.js';
import { silentLogger, type Logger } from '../log.js';
import { writeArrowFile } from '../report/arrow.js';
import { sha256File, writeAtomically } from '../report/files.js';
import type { Store } from '../store/store.js';
import { quoteIdent, quoteLiteral, readSql } from '../store/sql.js';

export const MANIFEST_NAME = '_manifest.json';
export const ARROW_ROOT = '_arrow';
const PART = 'part-0';

interface PartitionRow {
  granularity?: string;
  month?: string;
  n_rows: bigint;
  digest: string | null;
  run_ids: string[] | null;
}

interface Partition {
  dataset: string;
  /** Path below DIR, e.g. usage_program/granularity=daily/month=2026-10. */
  path: string;
  rowsSql: string;
  params: Record<string, unknown>;
  rows: number;
  fingerprint: string;
  runIds: string[];
}

export interface ExportResult {
  dir: string;
  partitions: number;
  written: string[];
  unchanged: number;
  removed: string[];
  rows: number;
}

/** The UTC month 'YYYY-MM' as [first instant, first instant of the next month). */
function monthRange(month: string): { from: Date; to: Date } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

async function listPartitions(store: Store): Promise<Partition[]> {
  const out: Partition[] = [];
  const add = (dataset: string, path: string, r: PartitionRow, rowsSql: string, params: Record<string, unknown>) =>
    out.push({
      dataset, path, rowsSql, params, rows: Number(r.n_rows),
      // The format version is part of the fingerprint, so a change of layout rewrites everything once.
      fingerprint: `v1:${r.n_rows}:${r.digest ?? ''}`,
      runIds: r.run_ids ?? [],
    });
  // SQL file names are literal (one pair per usage table), so a search for a file finds its caller.
  const usage = [
    { t: 'usage_program', partitions: readSql('src/export/sql/partitions_usage_program.sql'), rows: readSql('src/export/sql/rows_usage_program.sql') },
    { t: 'usage_framework', partitions: readSql('src/export/sql/partitions_usage_framework.sql'), rows: readSql('src/export/sql/rows_usage_framework.sql') },
  ] as const;
  for (const { t, partitions, rows } of usage) {
    for (const r of await store.query<PartitionRow>(partitions)) {
      const { from, to } = monthRange(r.month!);
      add(t, `${t}/granularity=${r.granularity}/month=${r.month}`, r, rows, { granularity: r.granularity, from, to });
    }
  }
  for (const r of await store.query<PartitionRow>(readSql('src/export/sql/partitions_spend_daily.sql'))) {
    add('spend_daily', `spend_daily/month=${r.month}`, r, readSql('src/export/sql/rows_spend_daily.sql'), { from: monthRange(r.month!).from });
  }
  for (const t of ['programs', 'frameworks', 'snapshots']) {
    const [r] = await store.query<PartitionRow>(readSql('src/export/sql/partitions_dimension.sql').replaceAll('{{table}}', quoteIdent(t)));
    if (r && Number(r.n_rows) > 0) add(t, t, r, readSql('src/export/sql/rows_dimension.sql').replaceAll('{{table}}', quoteIdent(t)), {});
  }
  return out;
}

function files(dir: string, p: Partition, formats: readonly ExportFormat[]) {
  return {
    parquet: join(dir, p.path, `${PART}.parquet`),
    manifest: join(dir, p.path, MANIFEST_NAME),
    ...(formats.includes('arrow') ? { arrow: join(dir, ARROW_ROOT, p.path, `${PART}.arrow`) } : {}),
  };
}

export async function exportDataset(opts: {
  store: Store;
  dir: string;
  formats?: readonly ExportFormat[];
  now?: Date;
  log?: Logger;
  /** Stops between partitions: each one written is whole and recorded, the rest is left for the next run. */
  signal?: AbortSignal;
}): Promise<ExportResult> {
  const { store } = opts;
  const log = opts.log ?? silentLogger;
  const formats = opts.formats ?? ['parquet'];
  const now = opts.now ?? new Date();
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });

  const previous = new Map(
    (await store.query<{ partition: string; fingerprint: string }>(readSql('src/export/sql/exported_list.sql'), { dir }))
      .map((r) => [r.partition, r.fingerprint]),
  );
  const partitions = await listPartitions(store);
  const result: ExportResult = { dir, partitions: partitions.length, written: [], unchanged: 0, removed: [], rows: 0 };
  const stage = readSql('src/export/sql/partition_stage.sql');
  const copy = readSql('src/export/sql/partition_copy.sql');

  for (const p of partitions) {
    opts.signal?.throwIfAborted();
    result.rows += p.rows;
    const f = files(dir, p, formats);
    const present = existsSync(f.parquet) && existsSync(f.manifest) && (!f.arrow || existsSync(f.arrow));
    if (previous.get(p.path) === p.fingerprint && present) {
      result.unchanged++;
      continue;
    }
    await mkdir(join(dir, p.path), { recursive: true });
    await store.run(stage.replaceAll('{{rows}}', () => p.rowsSql), p.params);
    await writeAtomically(f.parquet, (tmp) => store.run(copy.replaceAll('{{path}}', () => quoteLiteral(tmp))));
    const sha256 = await sha256File(f.parquet);
    const manifest: Record<string, unknown> = {
      dataset: p.dataset, partition: p.path, file: `${PART}.parquet`, rows: p.rows, sha256, run_ids: p.runIds,
      fingerprint: p.fingerprint, exported_at: now.toISOString(),
    };
    if (f.arrow) {
      const arrowPath = f.arrow;
      await mkdir(join(dir, ARROW_ROOT, p.path), { recursive: true });
      await writeAtomically(arrowPath, async (tmp) => {
        await writeArrowFile(store, 'export_partition', tmp);
      });
      manifest.arrow = { file: `${ARROW_ROOT}/${p.path}/${PART}.arrow`, sha256: await sha256File(arrowPath) };
    }
    await writeAtomically(f.manifest, (tmp) => writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n'));
    await store.run(readSql('src/export/sql/exported_record.sql'), {
      dir, partition: p.path, fingerprint: p.fingerprint, n_rows: BigInt(p.rows), sha256, exported_at: now,
    });
    result.written.push(p.path);
  }
  await store.run(readSql('src/export/sql/partition_drop.sql'));
  opts.signal?.throwIfAborted();

  // Partitions whose rows are all gone (a re-collect emptied a month, say) leave the dataset.
  const current = new Set(partitions.map((p) => p.path));
  for (const path of previous.keys()) {
    if (current.has(path)) continue;
    await rm(join(dir, path), { recursive: true, force: true });
    await rm(join(dir, ARROW_ROOT, path), { recursive: true, force: true });
    await store.run(readSql('src/export/sql/exported_forget.sql'), { dir, partition: path });
    result.removed.push(path);
  }
  log.info('dataset exported', { dir, written: result.written.length, unchanged: result.unchanged, removed: result.removed.length });
  return result;
}
