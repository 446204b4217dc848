// `export --dataset DIR`: the collected usage, the dimensions and the priced daily lines as a
// Hive-partitioned Parquet dataset that DuckDB, Spark, Trino, Athena, BigQuery and pandas read
// without this tool:
//   DIR/usage_program/granularity=daily/month=2026-10/part-0.parquet
//   DIR/usage_framework/granularity=hourly/month=2026-10/part-2026-10-05.parquet   (one file a day)
//   DIR/spend_daily/month=2026-10/part-0.parquet
//   DIR/programs/part-0.parquet (frameworks, snapshots likewise)
// Each partition directory also holds _manifest.json (its files with rows, sha256 and the runs their
// rows came from); readers skip files starting with '_' or '.'.
//
// Incremental in cost: the store knows which windows each run replaced (coverage rows carry the run
// that last wrote them), and the folder's record says which runs it has taken in (export_runs). An
// export looks only at the files whose windows later runs replaced (hourly usage a day, other usage
// and spend_daily a month), re-hashes those, and rewrites the ones whose rows differ; with no new run
// it reads no usage row. A spend_daily month is priced again only when what it is priced from changed
// (its usage files' values, its coverage, the prices or the inventory names). A folder with no record, or written in an earlier layout, is exported in full once.
// Files are written under temporary dot-names and renamed, those of one directory together, so a
// reader never sees half a file. With 'arrow', each file is also written as Arrow IPC under
// DIR/_arrow/ (a separate tree, so Parquet readers never meet it).
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ExportFormat } from '../domain/formats.js';
import { silentLogger, type Logger } from '../log.js';
import {
  DATASET_LAYOUT,
  DIMENSION_STREAMS,
  unitsOfWindow,
  type DatasetPartitionKey,
  type DatasetState,
  type Store,
} from '../store/store.js';
import { readManifest, writeDirectory, type DirectoryWork, type Unit } from './datasetFiles.js';

export { ARROW_ROOT, MANIFEST_NAME } from './datasetFiles.js';

export interface ExportResult {
  dir: string;
  /** Partition directories in the dataset after the export. */
  partitions: number;
  /** Partition directories with a file written or removed. */
  written: string[];
  /** Partition directories left as they were. */
  unchanged: number;
  /** Partition directories removed (all their rows gone). */
  removed: string[];
  /** Files (below DIR, without extension) written. */
  files: string[];
  /** Units whose rows were hashed (0 when nothing changed). */
  checked: number;
  /** The spend_daily months ('YYYY-MM') priced (a month is priced only when what it is priced from changed). */
  priced: string[];
  /** Rows in the dataset's files. */
  rows: number;
  /** Whether every unit was written (first export, or an earlier layout). */
  full: boolean;
}

/** Where a unit goes below DIR. */
export function unitOf(key: DatasetPartitionKey): Unit {
  const usage = key.stream === 'usage_program' || key.stream === 'usage_framework';
  const dir = usage
    ? `${key.stream}/granularity=${key.granularity}/month=${key.month}`
    : key.stream === 'spend_daily'
      ? `spend_daily/month=${key.month}`
      : key.stream;
  const file = key.day !== undefined ? `part-${key.day}` : 'part-0';
  return { key, dir, file, id: `${dir}/${file}` };
}

/** A unit id recorded by this layout ('dir/part-…'), back into its key; undefined for another layout's. */
function keyOfId(id: string): DatasetPartitionKey | undefined {
  const m =
    /^(usage_program|usage_framework)\/granularity=(\w+)\/month=(\d{4}-\d{2})\/part-(0|\d{4}-\d{2}-\d{2})$/.exec(id);
  if (m)
    return {
      stream: m[1] as 'usage_program',
      granularity: m[2]!,
      month: m[3]!,
      ...(m[4] !== '0' ? { day: m[4]! } : {}),
    };
  const s = /^spend_daily\/month=(\d{4}-\d{2})\/part-0$/.exec(id);
  if (s) return { stream: 'spend_daily', month: s[1]! };
  const d = /^(programs|frameworks|snapshots)\/part-0$/.exec(id);
  return d ? { stream: d[1] as 'programs' } : undefined;
}

interface Plan {
  full: boolean;
  /** Units to look at, by id. */
  candidates: Map<string, Unit>;
  /** Units to write even when their fingerprint is the recorded one (a file is missing). */
  forced: Set<string>;
  /** Records of an earlier layout, forgotten (their files removed unless a unit now owns them). */
  stale: string[];
  state: DatasetState;
}

function addUnit(m: Map<string, Unit>, key: DatasetPartitionKey): void {
  const u = unitOf(key);
  m.set(u.id, u);
}

/** Which units this export looks at, from the folder's record and what changed since. */
async function plan(
  store: Store,
  dir: string,
  previous: Map<string, string>,
  formats: readonly ExportFormat[],
): Promise<Plan> {
  const recorded = await store.dataset.state(dir);
  const full = recorded?.layout !== DATASET_LAYOUT;
  const pending = full ? 1 : await store.dataset.runsPending(dir);
  const digest = await store.dataset.contextDigest(pending > 0);
  const [, recordedNames = ''] = (recorded?.contextDigest ?? '').split('#');
  const state = { layout: DATASET_LAYOUT, contextDigest: `${digest.prices}#${digest.names ?? recordedNames}` };
  const candidates = new Map<string, Unit>();
  const forced = new Set<string>();
  const stale: string[] = [];
  if (full) {
    for (const key of await store.dataset.units()) addUnit(candidates, key);
    for (const id of previous.keys()) {
      const key = keyOfId(id);
      if (key)
        addUnit(candidates, key); // it may have lost its rows: looked at, removed if so
      else stale.push(id);
    }
  } else {
    for (const w of pending > 0 ? await store.dataset.changedWindows(dir) : [])
      for (const key of unitsOfWindow(w)) addUnit(candidates, key);
    if (state.contextDigest !== recorded?.contextDigest) {
      for (const month of await store.dataset.spendMonths()) addUnit(candidates, { stream: 'spend_daily', month });
      for (const id of previous.keys()) if (id.startsWith('spend_daily/')) addUnit(candidates, keyOfId(id)!);
    }
    // A file or manifest someone removed is written again.
    const manifests = new Map<string, Set<string>>();
    for (const id of previous.keys()) {
      const key = keyOfId(id);
      if (!key) continue;
      const u = unitOf(key);
      if (!manifests.has(u.dir))
        manifests.set(u.dir, new Set((await readManifest(dir, u.dir))?.files.map((f) => f.file) ?? []));
      if (!manifests.get(u.dir)!.has(`${u.file}.parquet`) || !filesPresent(dir, u, formats)) {
        candidates.set(u.id, u);
        forced.add(u.id);
      }
    }
  }
  if (full || pending > 0) for (const stream of DIMENSION_STREAMS) addUnit(candidates, { stream });
  if (full) for (const id of candidates.keys()) forced.add(id);
  return { full, candidates, forced, stale, state };
}

function filesPresent(dir: string, u: Unit, formats: readonly ExportFormat[]): boolean {
  return (
    existsSync(join(dir, u.dir, `${u.file}.parquet`)) &&
    (!formats.includes('arrow') || existsSync(join(dir, '_arrow', u.dir, `${u.file}.arrow`)))
  );
}

export async function exportDataset(opts: {
  store: Store;
  dir: string;
  formats?: readonly ExportFormat[];
  now?: Date;
  log?: Logger;
  /** Stops between files: each directory written is whole and recorded, the rest is left for the next run. */
  signal?: AbortSignal;
}): Promise<ExportResult> {
  const { store } = opts;
  const log = opts.log ?? silentLogger;
  const formats = opts.formats ?? ['parquet'];
  const now = opts.now ?? new Date();
  const dir = resolve(opts.dir);
  await mkdir(dir, { recursive: true });

  const previous = await store.dataset.exportedPartitions(dir);
  const p = await plan(store, dir, previous, formats);
  const result: ExportResult = {
    dir,
    partitions: 0,
    written: [],
    unchanged: 0,
    removed: [],
    files: [],
    checked: 0,
    priced: [],
    full: p.full,
    rows: 0,
  };

  // One directory at a time: its changed files are written, then renamed in together. Spend months
  // last: what one is priced from includes the records of its month's usage files.
  const byDir = new Map<string, Unit[]>();
  const order = (u: Unit) => `${u.key.stream === 'spend_daily' ? 1 : 0}${u.id}`;
  for (const u of [...p.candidates.values()].sort((a, b) => (order(a) < order(b) ? -1 : 1)))
    byDir.set(u.dir, [...(byDir.get(u.dir) ?? []), u]);
  for (const [partition, units] of byDir) {
    opts.signal?.throwIfAborted();
    const context = p.state.contextDigest;
    const work: DirectoryWork = { dir, partition, units, previous, forced: p.forced, formats, now, context };
    const done = await writeDirectory(store, work, opts.signal);
    result.checked += done.checked;
    if (units[0]!.key.stream === 'spend_daily' && done.checked > 0) result.priced.push(units[0]!.key.month!);
    result.files.push(...done.written);
    if (done.written.length > 0 || done.removedFiles > 0)
      (done.emptied ? result.removed : result.written).push(partition);
  }
  await store.dataset.dropStaged();
  opts.signal?.throwIfAborted();
  if (p.stale.length > 0) await removeStale(store, dir, p.stale, new Set(p.candidates.keys()));
  if (p.full) await removeStrayFiles(dir, previous, p.candidates);
  await store.dataset.recordExported(dir, p.state, now);

  result.partitions = new Set(
    [...(await store.dataset.exportedPartitions(dir)).keys()].map((id) => id.replace(/\/[^/]+$/, '')),
  ).size;
  result.unchanged = result.partitions - result.written.length;
  result.rows = await store.dataset.exportedRows(dir);
  log.info('dataset exported', {
    dir,
    full: p.full,
    checked: result.checked,
    priced: result.priced.length,
    files: result.files.length,
    partitions_written: result.written.length,
    removed: result.removed.length,
  });
  return result;
}

/** Records of an earlier layout (a directory per record): their part-0 files go unless a current
 *  unit wrote them again. */
async function removeStale(store: Store, dir: string, stale: string[], current: Set<string>): Promise<void> {
  for (const id of stale) {
    if (!current.has(`${id}/part-0`)) {
      await rm(join(dir, id, 'part-0.parquet'), { force: true });
      await rm(join(dir, '_arrow', id, 'part-0.arrow'), { force: true });
    }
    await store.dataset.forgetExportedPartition(dir, id);
  }
}

/** After a full export of an earlier layout: directories left without any file are removed. */
async function removeStrayFiles(dir: string, previous: Map<string, string>, current: Map<string, Unit>): Promise<void> {
  const dirs = new Set([...previous.keys()].filter((id) => !keyOfId(id)));
  for (const u of current.values()) dirs.delete(u.dir);
  for (const d of dirs) {
    for (const root of [join(dir, d), join(dir, '_arrow', d)]) {
      const left = existsSync(root)
        ? (await readdir(root)).filter((f) => !f.startsWith('_') && !f.startsWith('.'))
        : [];
      if (left.length === 0) await rm(root, { recursive: true, force: true });
    }
  }
}
