// The built command line as a user runs it, for tests: a real process (the built dist/, see child.ts),
// its exit code and output; and a digest of the usage tables to show a command changed nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { openStore } from '../../src/store/store.js';
import { distModule } from './child.js';
import { rawSql } from '../../src/store/rawSql.js';

export interface CliRun {
  proc: ChildProcess;
  /** What it has written so far. */
  output(): { stdout: string; stderr: string };
  /** The stderr lines complete so far, parsed (off a terminal every one is JSON; one that is not fails the parse, and the test). */
  lines(): Record<string, unknown>[];
  /** Resolves when the process has exited; `killedAfterMs` is set when the guard had to SIGKILL it. */
  done: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
    killedAfterMs?: number;
  }>;
}

/**
 * Starts the CLI. Asynchronous, so that a server in this process keeps answering while it runs.
 * `guardMs`: a process still running after this long is killed and reported as such (a hang is a failure).
 */
export function startCli(
  args: string[],
  o: { env?: NodeJS.ProcessEnv; cwd?: string; guardMs?: number; nodeOptions?: string[] } = {},
): CliRun {
  const cwd = o.cwd ?? process.cwd();
  const bin = distModule('src/cli/main.ts');
  const proc = spawn(process.execPath, [...(o.nodeOptions ?? []), bin, ...args], {
    cwd,
    env: { PATH: process.env.PATH, TZ: 'UTC', ...o.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => (stdout += d));
  proc.stderr.on('data', (d) => (stderr += d));
  let killedAfterMs: number | undefined;
  const guardMs = o.guardMs ?? 60_000;
  const guard = setTimeout(() => {
    killedAfterMs = guardMs;
    proc.kill('SIGKILL');
  }, guardMs);
  const done = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
    killedAfterMs?: number;
  }>((resolve) =>
    proc.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, ...(killedAfterMs !== undefined ? { killedAfterMs } : {}) });
    }),
  );
  const output = () => ({ stdout, stderr });
  const lines = () => stderrLines(stderr.slice(0, stderr.lastIndexOf('\n') + 1));
  return { proc, output, lines, done };
}

export function cli(args: string[], o: Parameters<typeof startCli>[1] = {}) {
  return startCli(args, o).done;
}

function jsonSafe(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (v instanceof Date) return v.toISOString();
  return v;
}

/** A deterministic digest of every row and column of the usage tables (run ids and times included). */
export async function usageTablesDigest(db: string): Promise<{ digest: string; rows: number }> {
  const store = await openStore({ path: db, readOnly: true });
  try {
    const h = createHash('sha256');
    let rows = 0;
    for (const table of ['usage_program', 'usage_framework']) {
      const all = await rawSql(store).query(`SELECT * FROM ${table} ORDER BY ALL`);
      rows += all.length;
      h.update(`${table}\n`);
      for (const r of all) h.update(JSON.stringify(r, jsonSafe) + '\n');
    }
    return { digest: h.digest('hex'), rows };
  } finally {
    await store.close();
  }
}

/** Off a terminal every stderr line is JSON: the lines parsed (a line that is not JSON fails the parse, and the test). */
export function stderrLines(stderr: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The error message a command ended with (the last stderr line of level error). */
export function errorMessage(stderr: string): string | undefined {
  return stderrLines(stderr)
    .filter((l) => l.level === 'error')
    .at(-1)?.msg as string | undefined;
}

/** The scopes a collect reported failed on stderr: `{ source, granularity, org, error }` each. */
export function failedScopes(stderr: string): { source: string; granularity: string; org: string; error: string }[] {
  return stderrLines(stderr)
    .filter((l) => l.msg === 'scope failed; other scopes go on')
    .map((l) => ({
      source: String(l.source),
      granularity: String(l.granularity),
      org: String(l.org),
      error: String(l.error),
    }));
}
