// One partition directory of the dataset (src/export/dataset.ts) brought up to date: each unit that
// may have changed is fingerprinted, the ones whose rows differ from the recorded fingerprint are
// staged and written under temporary dot-names, then renamed in together; files that lost their rows
// (or that an earlier layout left) are removed, and the directory's _manifest.json is rewritten.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExportFormat } from '../domain/formats.js';
import { writeArrowFile } from '../report/arrow.js';
import { sha256File, tempPathFor, writeAtomically } from '../report/files.js';
import { STAGED_PARTITION, type DatasetPartitionKey, type Store } from '../store/store.js';

export const MANIFEST_NAME = '_manifest.json';
export const ARROW_ROOT = '_arrow';

/** One file of the dataset: `dir/file.parquet` below the root. */
export interface Unit {
  key: DatasetPartitionKey;
  /** The partition directory, e.g. usage_program/granularity=hourly/month=2026-10. */
  dir: string;
  /** e.g. part-0, part-2026-10-05. */
  file: string;
  /** `${dir}/${file}`: the record's key in export_partitions. */
  id: string;
}

export interface ManifestFile {
  file: string;
  rows: number;
  sha256: string;
  run_ids: string[];
  fingerprint: string;
  exported_at: string;
  arrow?: { file: string; sha256: string };
}

interface Manifest {
  files: ManifestFile[];
}

export interface DirectoryWork {
  dir: string;
  partition: string;
  units: Unit[];
  /** The recorded fingerprints, by unit id. */
  previous: Map<string, string>;
  forced: Set<string>;
  formats: readonly ExportFormat[];
  now: Date;
}

interface Written {
  unit: Unit;
  tmp: { parquet: string; arrow?: string };
  entry: ManifestFile;
}

/** The directory's manifest, or undefined when it is missing or unreadable (its files are then rewritten). */
export async function readManifest(root: string, partition: string): Promise<Manifest | undefined> {
  try {
    const m = JSON.parse(await readFile(join(root, partition, MANIFEST_NAME), 'utf8')) as Partial<Manifest>;
    return Array.isArray(m.files) ? { files: m.files } : undefined;
  } catch {
    return undefined;
  }
}

const fingerprintOf = (rows: bigint, digest: string) => `v2:${rows}:${digest}`;

/** Stages a unit and writes its files under temporary names; undefined when it has no rows, 'same'
 *  when its staged rows have the fingerprint `unlessSame`. */
async function stageAndWrite(
  store: Store,
  w: DirectoryWork,
  u: Unit,
  known?: string,
  unlessSame?: string,
): Promise<Written | 'same' | undefined> {
  const runIds = await store.dataset.stagePartition(u.key);
  const fp =
    known ??
    (await store.dataset
      .stagedFingerprint()
      .then((f) => (f.rows === 0n ? undefined : fingerprintOf(f.rows, f.digest))));
  if (fp === undefined) return undefined;
  if (fp === unlessSame) return 'same';
  const rows = Number(fp.split(':')[1]);
  const parquet = join(w.dir, w.partition, `${u.file}.parquet`);
  const tmp: Written['tmp'] = { parquet: tempPathFor(parquet) };
  await store.dataset.copyStaged(tmp.parquet);
  const entry: ManifestFile = {
    file: `${u.file}.parquet`,
    rows,
    sha256: await sha256File(tmp.parquet),
    run_ids: runIds,
    fingerprint: fp,
    exported_at: w.now.toISOString(),
  };
  if (w.formats.includes('arrow')) {
    const arrowDir = join(w.dir, ARROW_ROOT, w.partition);
    await mkdir(arrowDir, { recursive: true });
    tmp.arrow = tempPathFor(join(arrowDir, `${u.file}.arrow`));
    await writeArrowFile(store, STAGED_PARTITION, tmp.arrow);
    entry.arrow = { file: `${ARROW_ROOT}/${w.partition}/${u.file}.arrow`, sha256: await sha256File(tmp.arrow) };
  }
  return { unit: u, tmp, entry };
}

export interface DirectoryResult {
  checked: number;
  written: string[];
  removedFiles: number;
  /** The directory has no file left (and was removed). */
  emptied: boolean;
}

/** Brings one partition directory up to date (see the header). */
export async function writeDirectory(store: Store, w: DirectoryWork, signal?: AbortSignal): Promise<DirectoryResult> {
  await mkdir(join(w.dir, w.partition), { recursive: true });
  const written: Written[] = [];
  const emptied: Unit[] = [];
  let checked = 0;
  try {
    for (const u of w.units) {
      signal?.throwIfAborted();
      checked++;
      // A priced month is computed from the whole spend views whichever way it is read: staged once
      // and compared, rather than hashed through the views and then staged again.
      if (w.forced.has(u.id) || u.key.stream === 'spend_daily') {
        const out = await stageAndWrite(store, w, u, undefined, w.forced.has(u.id) ? undefined : w.previous.get(u.id));
        if (out === undefined) emptied.push(u);
        else if (out !== 'same') written.push(out);
        continue;
      }
      // Usage: hashed where it is stored, staged only if it differs from what was exported.
      const f = await store.dataset.fingerprint(u.key);
      if (f.rows === 0n) emptied.push(u);
      else if (w.previous.get(u.id) !== fingerprintOf(f.rows, f.digest)) {
        const out = await stageAndWrite(store, w, u, fingerprintOf(f.rows, f.digest));
        if (out && out !== 'same') written.push(out);
      }
    }
    signal?.throwIfAborted();
  } catch (err) {
    for (const x of written) for (const t of Object.values(x.tmp)) await rm(t, { force: true });
    throw err;
  }
  const removable = emptied.filter(
    (u) => w.previous.has(u.id) || existsSync(join(w.dir, w.partition, `${u.file}.parquet`)),
  );
  if (written.length === 0 && removable.length === 0) return { checked, written: [], removedFiles: 0, emptied: false };
  const files = await swapIn(store, w, written, removable);
  return { checked, written: written.map((x) => x.unit.id), removedFiles: removable.length, emptied: files === 0 };
}

/** Renames the written files in, removes the emptied ones and any stray part file, rewrites the
 *  manifest and the records. Returns how many files the directory holds after. */
async function swapIn(store: Store, w: DirectoryWork, written: Written[], emptied: Unit[]): Promise<number> {
  const entries = new Map((await readManifest(w.dir, w.partition))?.files.map((f) => [f.file, f]) ?? []);
  for (const x of written) {
    await rename(x.tmp.parquet, join(w.dir, w.partition, x.entry.file));
    if (x.tmp.arrow) await rename(x.tmp.arrow, join(w.dir, ARROW_ROOT, w.partition, `${x.unit.file}.arrow`));
    entries.set(x.entry.file, x.entry);
  }
  for (const u of emptied) entries.delete(`${u.file}.parquet`);
  // Whatever part file the manifest does not list goes: an emptied unit's, or an earlier layout's.
  for (const [root, ext] of [
    [join(w.dir, w.partition), '.parquet'],
    [join(w.dir, ARROW_ROOT, w.partition), '.arrow'],
  ] as const) {
    if (!existsSync(root)) continue;
    for (const f of await readdir(root)) {
      if (f.startsWith('part-') && f.endsWith(ext) && !entries.has(f.replace(/\.arrow$/, '.parquet')))
        await rm(join(root, f), { force: true });
    }
  }
  const files = [...entries.values()].sort((a, b) => (a.file < b.file ? -1 : 1));
  if (files.length === 0) {
    await rm(join(w.dir, w.partition), { recursive: true, force: true });
    await rm(join(w.dir, ARROW_ROOT, w.partition), { recursive: true, force: true });
  } else {
    await writeAtomically(join(w.dir, w.partition, MANIFEST_NAME), (tmp) =>
      writeFile(tmp, JSON.stringify(manifestOf(w, files), null, 2) + '\n'),
    );
  }
  for (const x of written) {
    await store.dataset.recordExportedPartition({
      dir: w.dir,
      partition: x.unit.id,
      fingerprint: x.entry.fingerprint,
      rows: x.entry.rows,
      sha256: x.entry.sha256,
      exportedAt: w.now,
    });
  }
  for (const u of emptied) await store.dataset.forgetExportedPartition(w.dir, u.id);
  return files.length;
}

/** The directory's manifest: its files, and their totals. A directory of one part-0 file also carries
 *  that file's fields at the top (file, sha256, fingerprint, arrow). */
function manifestOf(w: DirectoryWork, files: ManifestFile[]): Record<string, unknown> {
  const only = files.length === 1 && files[0]!.file === 'part-0.parquet' ? files[0]! : undefined;
  return {
    dataset: w.partition.split('/')[0],
    partition: w.partition,
    rows: files.reduce((n, f) => n + f.rows, 0),
    run_ids: [...new Set(files.flatMap((f) => f.run_ids))].sort(),
    exported_at: files.reduce((t, f) => (f.exported_at > t ? f.exported_at : t), ''),
    ...(only
      ? {
          file: only.file,
          sha256: only.sha256,
          fingerprint: only.fingerprint,
          ...(only.arrow ? { arrow: only.arrow } : {}),
        }
      : {}),
    files,
  };
}
