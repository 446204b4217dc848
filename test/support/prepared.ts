// Things a test run makes once and many test files use (a loaded month's database, the packed tarball),
// kept in the run's folder (test/support/tmpRoot.ts) and so removed with it: nothing outlives the code
// that made it. Test files run in parallel: the first to need a thing makes it, the others wait for it.
import { closeSync, copyFileSync, existsSync, mkdirSync, openSync, renameSync, rmSync, watch } from 'node:fs';
import { dirname } from 'node:path';

/** Keeps a closed store's file as the prepared copy: written beside it, then renamed, so a reader never sees half. */
export function keepPrepared(path: string, prepared: string): void {
  const partial = `${prepared}.${process.pid}.partial`;
  copyFileSync(path, partial);
  renameSync(partial, prepared);
}

/**
 * Whether this file is to build `prepared`: true when it took the build (its marker made), false once
 * another file's build put it in place. Test files run in parallel, and two that load the same month
 * start together: the second waits for the first rather than loading it too. A build that ends without
 * the file (it failed) hands the build on.
 */
export async function claimBuild(prepared: string): Promise<boolean> {
  const marker = `${prepared}.building`;
  mkdirSync(dirname(prepared), { recursive: true });
  for (;;) {
    if (existsSync(prepared)) return false;
    try {
      closeSync(openSync(marker, 'wx'));
      if (!existsSync(prepared)) return true;
      rmSync(marker, { force: true });
      return false;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    // Woken by the folder's change (the rename in place, or the marker removed), never by a timer.
    await new Promise<void>((done) => {
      const watcher = watch(dirname(prepared), () => {
        watcher.close();
        done();
      });
      if (existsSync(prepared) || !existsSync(marker)) {
        watcher.close();
        done();
      }
    });
  }
}

/** Ends a build `claimBuild` gave: the others waiting are woken, to find the thing or (it failed) build it. */
export function endBuild(prepared: string): void {
  rmSync(`${prepared}.building`, { force: true });
}
