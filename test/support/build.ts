// Vitest global setup: the build `npm ci` runs (scripts/prepare.mjs), so tests that spawn the CLI (dist/)
// run today's code; it compiles only when a source changed since dist/ was built.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/prepare.mjs'], { stdio: 'inherit' });
}
