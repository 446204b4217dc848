// Files appear whole or not at all: each is written under a temporary name beside its final
// name and renamed into place (rename is atomic within a directory).
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

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
