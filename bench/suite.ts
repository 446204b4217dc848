// `npm test` as a user runs it, timed: the suite's wall time is one of the full benchmark's figures. Its
// output goes to a log in the bench folder; the summary vitest prints last is kept.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';

export interface SuiteResult {
  wallS: number;
  exitCode: number | null;
  /** vitest's closing lines: Test Files, Tests, Duration (with its own split of the time). */
  summary: string[];
  log: string;
}

/** Runs `npm test` in `root`, its output to `<dir>/npm-test.log`. */
export async function runSuite(root: string, dir: string): Promise<SuiteResult> {
  const log = join(dir, 'npm-test.log');
  const out = openSync(log, 'w');
  const started = performance.now();
  try {
    const child = spawn('npm', ['test'], {
      cwd: root,
      stdio: ['ignore', out, out],
      env: { ...process.env, CI: 'true' },
    });
    const exitCode = await new Promise<number | null>((ok, fail) => {
      child.once('error', fail);
      child.once('close', (code) => ok(code));
    });
    return {
      wallS: (performance.now() - started) / 1000,
      exitCode,
      summary: suiteSummary(readFileSync(log, 'utf8')),
      log,
    };
  } finally {
    closeSync(out);
  }
}

/** The Test Files, Tests and Duration lines of vitest's output, colours removed. */
export function suiteSummary(output: string): string[] {
  return stripVTControlCharacters(output)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^(Test Files|Tests|Duration)\s/.test(l));
}
