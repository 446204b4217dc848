// Compiles one entry module and what it imports to JavaScript for a child process (Node 20 cannot run
// TypeScript). Type-checking is the job of `tsc --noEmit`; here only the emit matters, so it is fast.
// The output goes under node_modules/.cache so that the compiled modules resolve the installed packages.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './fixture.js';

export interface Build {
  /** The compiled module's file path for a source path such as 'src/app/lock.ts'. */
  module(src: string): string;
  remove(): void;
}

export function compile(entry: string, name: string): Build {
  const outDir = join(REPO, 'node_modules/.cache/usage-pipeline-tests', `${name}-${process.pid}`);
  const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
  const args = [tsc, '--noCheck', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022', '--skipLibCheck', '--types', 'node', '--rootDir', REPO, '--outDir', outDir, join(REPO, entry)];
  try {
    execFileSync(process.execPath, args, { cwd: REPO, stdio: 'pipe' });
  } catch (err) {
    // --noCheck still reports unresolvable imports; the emitted files are what matters, and a missing
    // module shows up as the child's import error.
    const out = String((err as { stdout?: Buffer }).stdout ?? '');
    if (!/error TS2307/.test(out)) throw err;
  }
  return {
    module: (src) => join(outDir, src.replace(/\.ts$/, '.js')),
    remove: () => rmSync(outDir, { recursive: true, force: true }),
  };
}
