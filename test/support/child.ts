// The one way tests run our code in a child process: the built modules under dist/, which the
// integration project's global setup (build.ts) compiles before any test starts.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const REPO = resolve(import.meta.dirname, '../..');

/** The built module for a source path such as 'src/app/lock.ts'. */
export function distModule(src: string): string {
  const out = join(REPO, 'dist', src.replace(/\.ts$/, '.js'));
  if (!existsSync(out))
    throw new Error(`${out} is missing: run \`npm run build\` (the integration tests' global setup does).`);
  return out;
}
