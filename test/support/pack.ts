// The package as `npm pack` makes it, packed once a run for every test that installs it. Its pack hooks
// (scripts/pack.mjs) rewrite package.json in the checkout while packing: two packs at once (test files
// run in parallel) would each put back the other's file mid-pack, and ship `prepare`. One pack a run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { claimBuild, endBuild } from './prepared.js';
import { RUN_FOLDER } from './tmpRoot.js';

const REPO = resolve(import.meta.dirname, '../..');
const NPM_TIMEOUT_MS = 240_000;

export interface Packed {
  /** The tarball's path. */
  tarball: string;
  /** The paths the tarball holds, as `npm pack --json` lists them. */
  files: string[];
}

/** The tarball of this run's pack (made by the first test file that asks). */
export async function packedTarball(): Promise<Packed> {
  // Under the run's folder when there is one (always in a vitest run), so the pack is the run's own.
  const folder = join(process.env[RUN_FOLDER] ?? tmpdir(), 'prepared-pack');
  const listing = join(folder, 'pack.json');
  if (await claimBuild(listing)) {
    try {
      mkdirSync(folder, { recursive: true });
      // dist/ is fresh (the test setup built it); USAGE_PACK_PREBUILT keeps pack from rebuilding it under
      // the tests that are running it, while its hooks still shape the packed package.json.
      const out = execFileSync('npm', ['pack', '--json', '--pack-destination', folder], {
        cwd: REPO,
        encoding: 'utf8',
        timeout: NPM_TIMEOUT_MS,
        env: { ...process.env, USAGE_PACK_PREBUILT: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      writeFileSync(`${listing}.partial`, out);
      renameSync(`${listing}.partial`, listing);
    } finally {
      endBuild(listing);
    }
  }
  const [packed] = JSON.parse(readFileSync(listing, 'utf8')) as { filename: string; files: { path: string }[] }[];
  return { tarball: join(dirname(listing), packed!.filename), files: packed!.files.map((f) => f.path) };
}
