#!/usr/bin/env node
// `npm ci` builds dist/ with TypeScript. A production install (`npm ci --omit=dev`) has no TypeScript:
// then the build is skipped rather than failing, and says so when there is no dist/ to run.
import { chmodSync, existsSync } from 'node:fs';
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
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { stdio: 'inherit' });
// tsc writes the entry point without the executable bit; `npx usage-pipeline` in the checkout runs the file itself.
chmodSync('dist/src/cli/main.js', 0o755);
