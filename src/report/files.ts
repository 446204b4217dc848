// Files appear whole or not at all: each is written under a temporary name beside its final
// name and renamed into place (rename is atomic within a directory). A month's files appear as a set:
// they are written into a fresh hidden folder beside the month's, and the month's name is a symbolic
// link to the live set, replaced by one rename (a link renamed over a link is atomic), so a reader
// sees the old set or the new one at every moment. The next run removes what a crash left.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rename, rm, symlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pidAlive } from '../process.js';

/** Hidden entries beside a month: a set being written (new), a complete set (set), the link about to
 * replace the month's (link), a month folder of an earlier release moved aside (old), and a run's
 * scratch folder of intermediate Parquet stages (stage). */
const STAGE = /^\.(.+)\.(new|set|link|old|stage)-(\d+)-[0-9a-f]+$/;
const TEMP_FILE = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;

const stageName = (label: string, kind: 'new' | 'set' | 'link' | 'old' | 'stage') =>
  `.${label}.${kind}-${process.pid}-${randomBytes(4).toString('hex')}`;

/**
 * A fresh hidden folder under outDir for a run's intermediate stages (store/report/stages.ts): on the
 * output's disk rather than the OS temp folder, and removed by cleanReportLeftovers if the run dies.
 */
export async function freshStageDir(outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const dir = join(outDir, stageName('report', 'stage'));
  await mkdir(dir);
  return dir;
}

/** The set folder a month's link points at (a name beside it), or null when it is no link. */
function liveSet(monthPath: string): string | null {
  try {
    return lstatSync(monthPath).isSymbolicLink() ? basename(readlinkSync(monthPath)) : null;
  } catch {
    return null;
  }
}

/**
 * Removes what a report run that died left under `outDir`: half-written sets, sets no longer linked,
 * unused links, and temporary files inside month folders. A month folder of an earlier release moved
 * aside but never replaced is put back. Leftovers of a process still running are left alone.
 */
export async function cleanReportLeftovers(outDir: string): Promise<string[]> {
  if (!existsSync(outDir)) return [];
  const cleaned: string[] = [];
  for (const name of await readdir(outDir)) {
    const m = STAGE.exec(name);
    if (m) {
      const [, label, kind, pid] = m as unknown as [string, string, string, string];
      if (kind === 'set' && liveSet(join(outDir, label)) === name) continue;
      if (pidAlive(Number(pid))) continue;
      const path = join(outDir, name);
      if (kind === 'old' && !existsSync(join(outDir, label))) await rename(path, join(outDir, label));
      else await rm(path, { recursive: true, force: true });
      cleaned.push(path);
      continue;
    }
    const month = join(outDir, name);
    let entries: string[];
    try {
      entries = readdirSync(month);
    } catch {
      continue; // a file, not a month folder
    }
    for (const f of entries) {
      const t = TEMP_FILE.exec(f);
      if (t && !pidAlive(Number(t[1]))) {
        await rm(join(month, f), { force: true });
        cleaned.push(join(month, f));
      }
    }
  }
  return cleaned;
}

/** A fresh, empty folder beside outDir/label to write a new set into. */
export async function freshSetDir(outDir: string, label: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const dir = join(outDir, stageName(label, 'new'));
  await mkdir(dir);
  return dir;
}

/**
 * Makes a complete set (its manifest written last) the live one for `finalDir`: the set is renamed to
 * its final hidden name, a new link to it replaces the month's link in one rename, and the set it
 * replaced is removed. A month that is still a plain folder (written by an earlier release) is moved
 * aside once, then removed.
 */
export async function swapInSet(setDir: string, finalDir: string): Promise<void> {
  const outDir = dirname(finalDir);
  const label = basename(finalDir);
  const setName = stageName(label, 'set');
  await rename(setDir, join(outDir, setName));
  const link = join(outDir, stageName(label, 'link'));
  await symlink(setName, link, 'dir');
  const previous = liveSet(finalDir);
  let legacy: string | null = null;
  if (previous === null && existsSync(finalDir)) {
    legacy = join(outDir, stageName(label, 'old'));
    await rename(finalDir, legacy);
  }
  try {
    await rename(link, finalDir);
  } catch (err) {
    if (legacy)
      await rename(legacy, finalDir).catch(() => {
        // best effort: the original error below is what the caller must see
      });
    await rm(link, { force: true });
    throw err;
  }
  if (previous) await rm(join(outDir, previous), { recursive: true, force: true });
  if (legacy) await rm(legacy, { recursive: true, force: true });
}

export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** Runs write(tmp), then renames tmp to finalPath; removes tmp if anything fails. */
export async function writeAtomically(finalPath: string, write: (tmpPath: string) => Promise<void>): Promise<void> {
  const tmp = tempPathFor(finalPath);
  try {
    await write(tmp);
    await rename(tmp, finalPath);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}
