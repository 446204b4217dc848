// Files appear whole or not at all: each is written under a temporary name beside its final
// name and renamed into place (rename is atomic within a directory). A month's files appear as a set:
// they are written into a fresh folder beside the month's, which is then swapped in with two renames
// (the old folder aside, the new one into place); the next run puts back or removes what a crash left.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pidAlive } from '../process.js';

const STAGE = /^\.(.+)\.(new|old)-(\d+)-[0-9a-f]+$/;
const TEMP_FILE = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;


/**
 * Removes what a report run that died left under `outDir`: half-written sets, and temporary files inside
 * month folders. A set moved aside but never replaced (a crash between the two renames) is put back.
 * Leftovers of a process still running are left alone.
 */
export async function cleanReportLeftovers(outDir: string): Promise<string[]> {
  if (!existsSync(outDir)) return [];
  const cleaned: string[] = [];
  for (const name of await readdir(outDir)) {
    const m = STAGE.exec(name);
    if (m) {
      const [, label, kind, pid] = m as unknown as [string, string, string, string];
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
  const dir = join(outDir, `.${label}.new-${process.pid}-${randomBytes(4).toString('hex')}`);
  await mkdir(dir);
  return dir;
}

/** Swaps a complete set (its manifest written last) in for outDir/label: old aside, new in, old removed. */
export async function swapInSet(setDir: string, finalDir: string): Promise<void> {
  const aside = join(dirname(finalDir), `.${basename(finalDir)}.old-${process.pid}-${randomBytes(4).toString('hex')}`);
  const hadOld = existsSync(finalDir);
  if (hadOld) await rename(finalDir, aside);
  try {
    await rename(setDir, finalDir);
  } catch (err) {
    if (hadOld) await rename(aside, finalDir).catch(() => {});
    throw err;
  }
  if (hadOld) await rm(aside, { recursive: true, force: true });
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
