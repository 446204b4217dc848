// The demo's folder as `npm start` leaves it (the database, its analyst copy and parts, last month's
// reports), made once a run for the tests that start from it rather than watch it being made, and copied
// into each test's own folder (test/cli/demo.int.test.ts runs the demo itself).
import { cpSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { demoCommand } from '../../src/cli/demo.js';
import { silentLogger } from '../../src/log.js';
import { claimBuild, endBuild } from './prepared.js';
import { RUN_FOLDER } from './tmpRoot.js';

export interface DemoCopy {
  /** The database, its analyst copy, and the reports folder (`<month>/` inside), in the caller's folder. */
  db: string;
  analystCopy: string;
  outDir: string;
  /** The demo's collect's exit code. */
  collectExitCode: number;
}

const DB = 'usage.duckdb';

interface Summary {
  collectExitCode: number;
  /** The analyst copy's name in the demo's folder. */
  analystCopy: string | null;
}

/** Runs the demo as of `now` in `folder`. */
async function runDemo(folder: string, now: number): Promise<Summary> {
  const r = await demoCommand({
    db: join(folder, DB),
    outDir: join(folder, 'reports'),
    now: () => now,
    log: silentLogger,
  });
  return { collectExitCode: r.collect.exitCode, analystCopy: r.analystCopy === null ? null : basename(r.analystCopy) };
}

/**
 * The demo as of `now`, copied into the folder `dir`. The analyst copy's views name its part files by
 * absolute path, so the copy's views read the parts of the run's one demo (made where it stays): the same
 * bytes. Outside a run's folder (test/support/tmpRoot.ts) the demo runs in `dir` itself.
 */
export async function demoCopy(dir: string, now: number): Promise<DemoCopy> {
  const runFolder = process.env[RUN_FOLDER];
  let summary: Summary;
  if (!runFolder) summary = await runDemo(dir, now);
  else {
    const folder = join(runFolder, 'prepared-demo', String(now));
    // The summary, written last, says the folder is whole.
    const ready = `${folder}.json`;
    if (await claimBuild(ready)) {
      try {
        rmSync(folder, { recursive: true, force: true });
        writeFileSync(`${ready}.partial`, JSON.stringify(await runDemo(folder, now)));
        renameSync(`${ready}.partial`, ready);
      } finally {
        endBuild(ready);
      }
    }
    summary = JSON.parse(readFileSync(ready, 'utf8')) as Summary;
    cpSync(folder, dir, { recursive: true });
  }
  if (summary.analystCopy === null) throw new Error('the demo published no analyst copy');
  return {
    db: join(dir, DB),
    analystCopy: join(dir, summary.analystCopy),
    outDir: join(dir, 'reports'),
    collectExitCode: summary.collectExitCode,
  };
}
