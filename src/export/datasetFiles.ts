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
import { STAGED_PARTITION, type DatasetFingerprint, type DatasetPartitionKey, type Store } from '../store/store.js';

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
  /** The folder's digest of prices and names, part of what a spend month is priced from. */
  context: string;
}

interface Written {
  unit: Unit;
  tmp: { parquet: string; arrow?: string };
  entry: ManifestFile;
  pricing?: string;
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

/** What a unit's written files are recorded with: its fingerprint, and what pricing reads of it. */
interface Digests {
  fingerprint: string;
  pricing?: string;
}

/** Stages a unit and writes its files under temporary names; undefined when it has no rows, 'same'
 *  when its staged rows have the fingerprint `unlessSame`. `known`: the unit's digests, when they were
 *  taken where its rows are stored. */
async function stageAndWrite(
  store: Store,
  w: DirectoryWork,
  u: Unit,
  opts: { known?: Digests; unlessSame?: string },
): Promise<Written | 'same' | undefined> {
  const runIds = await store.dataset.stagePartition(u.key);
  const digests = opts.known ?? digestsOf(await store.dataset.stagedFingerprint(u.key.stream));
  if (digests === undefined) return undefined;
  if (digests.fingerprint === opts.unlessSame) return 'same';
  const rows = Number(digests.fingerprint.split(':')[1]);
  const parquet = join(w.dir, w.partition, `${u.file}.parquet`);
  const tmp: Written['tmp'] = { parquet: tempPathFor(parquet) };
  await store.dataset.copyStaged(u.key.stream, tmp.parquet);
  const entry: ManifestFile = {
    file: `${u.file}.parquet`,
    rows,
    sha256: await sha256File(tmp.parquet),
    run_ids: runIds,
    fingerprint: digests.fingerprint,
    exported_at: w.now.toISOString(),
  };
  if (w.formats.includes('arrow')) {
    const arrowDir = join(w.dir, ARROW_ROOT, w.partition);
    await mkdir(arrowDir, { recursive: true });
    tmp.arrow = tempPathFor(join(arrowDir, `${u.file}.arrow`));
    await writeArrowFile(store, STAGED_PARTITION, tmp.arrow);
    entry.arrow = { file: `${ARROW_ROOT}/${w.partition}/${u.file}.arrow`, sha256: await sha256File(tmp.arrow) };
  }
  return { unit: u, tmp, entry, ...(digests.pricing !== undefined ? { pricing: digests.pricing } : {}) };
}

const digestsOf = (f: DatasetFingerprint): Digests | undefined =>
  f.rows === 0n
    ? undefined
    : { fingerprint: fingerprintOf(f.rows, f.digest), ...(f.pricing !== undefined ? { pricing: f.pricing } : {}) };

/** A usage or dimension unit is hashed where it is stored and staged only if it differs from what was
 *  exported; a forced one is staged at once. */
async function usageOrDimension(store: Store, w: DirectoryWork, u: Unit): Promise<Written | 'same' | undefined> {
  if (w.forced.has(u.id)) return stageAndWrite(store, w, u, {});
  const known = digestsOf(await store.dataset.fingerprint(u.key));
  if (known === undefined) return undefined;
  return known.fingerprint === w.previous.get(u.id) ? 'same' : stageAndWrite(store, w, u, { known });
}

/** A priced month is computed from the spend views whichever way it is read: skipped when what it is
 *  priced from is what its recorded file was priced from, else staged once and compared. */
async function spendMonth(store: Store, w: DirectoryWork, u: Unit): Promise<Written | 'same' | 'skipped' | undefined> {
  const pricing = await store.dataset.spendPricedFrom(w.dir, u.key.month!, w.context);
  const forced = w.forced.has(u.id);
  if (!forced && w.previous.has(u.id) && (await store.dataset.pricingDigest(w.dir, u.id)) === pricing) return 'skipped';
  const out = await stageAndWrite(store, w, u, forced ? {} : { unlessSame: w.previous.get(u.id) });
  if (out === 'same') await store.dataset.recordPricingDigest(w.dir, u.id, pricing);
  return out === undefined || out === 'same' ? out : { ...out, pricing };
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
      const out = u.key.stream === 'spend_daily' ? await spendMonth(store, w, u) : await usageOrDimension(store, w, u);
      if (out === 'skipped') continue;
      checked++;
      if (out === undefined) emptied.push(u);
      else if (out !== 'same') written.push(out);
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
      ...(x.pricing !== undefined ? { pricingDigest: x.pricing } : {}),
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
