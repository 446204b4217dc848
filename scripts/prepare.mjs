#!/usr/bin/env node
// `npm ci` builds dist/ with TypeScript. A production install (`npm ci --omit=dev`) has no TypeScript:
// then the build is skipped rather than failing, and says so when there is no dist/ to run.
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

// `npm pack` runs prepare too; the tests pack the dist/ they built while other tests run it.
if (process.env.USAGE_PACK_PREBUILT === '1' && process.env.npm_lifecycle_event === 'prepare') process.exit(0);
const require = createRequire(import.meta.url);
let tsc;
try {
  tsc = require.resolve('typescript/bin/tsc');
} catch {
  if (!existsSync('dist/src/cli/main.js')) {
    process.stderr.write(
      'usage-pipeline: TypeScript is not installed (dev dependencies omitted), so dist/ was not built: run `npm ci` with dev dependencies to build, or install the packed tarball (`npm pack`), which ships dist/.\n',
    );
  }
  process.exit(0);
}
// What the build reads: the compiler's version, its settings and every source. When dist/ was built from
// exactly these (the stamp), it is not built again: `npm ci` builds it, and the test run's setup, which
// runs this script too, finds it current (a whole build is most of ten seconds at the start of every run).
const STAMP = 'dist/.inputs.sha256';
function inputsDigest() {
  const h = createHash('sha256').update(require('typescript/package.json').version);
  const files = [
    'tsconfig.json',
    ...['src', 'bench'].flatMap((d) => readdirSync(d, { recursive: true }).map((f) => join(d, f))),
  ];
  for (const f of files.filter((x) => x === 'tsconfig.json' || x.endsWith('.ts')).sort())
    h.update(`\0${f}\0`).update(readFileSync(f));
  return h.digest('hex');
}
const digest = inputsDigest();
if (existsSync('dist/src/cli/main.js') && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === digest)
  process.exit(0);
rmSync(STAMP, { force: true });
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
// tsc writes the entry point without the executable bit; `npx usage-pipeline` in the checkout runs the file itself.
chmodSync('dist/src/cli/main.js', 0o755);
writeFileSync(STAMP, digest + '\n');
