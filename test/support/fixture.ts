// Shared set-up for the scheduler tests: a real sandbox over HTTP, a temp directory holding the config,
// the DuckDB file and the reports, and a logger whose lines the tests can read.
import { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, onTestFailed } from 'vitest';
import { createLogger, type Logger } from '../../src/log.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';

export { REPO } from './child.js';
import { REPO } from './child.js';
import { rawSql } from '../../src/store/rawSql.js';

export interface Fixture {
  dir: string;
  configPath: string;
  dbPath: string;
  outDir: string;
  sb: Sandbox;
  env: NodeJS.ProcessEnv;
  log: Logger;
  lines: Record<string, unknown>[];
  /** The options every command and the scheduler take. */
  common: { config: string; cwd: string; env: NodeJS.ProcessEnv; log: Logger };
  cleanup(): Promise<void>;
}

/**
 * `fast`: the sandbox and the client allow far more than the API's 700 requests a minute, so that a
 * collection is not paced over seconds; the default keeps the real limits (and so, slower runs).
 */
export async function fixture(sandbox: SandboxOptions & { fast?: boolean } = {}, extraToml = ''): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'usage-schedule-'));
  const { fast, ...sandboxOpts } = sandbox;
  const limits = fast ? { perMinute: 100_000, perSecondPerRoute: 1_000 } : undefined;
  const sb = await startSandbox({ port: 0, scenario: 'small', ...(limits ? { limits } : {}), ...sandboxOpts });
  const dbPath = join(dir, 'usage.duckdb');
  const outDir = join(dir, 'reports');
  const configPath = join(dir, 'usage.toml');
  writeFileSync(
    configPath,
    [
      '[api]',
      `base_url = ${JSON.stringify(sb.baseUrl)}`,
      ...(limits
        ? ['[api.rate_limit]', `per_minute = ${limits.perMinute}`, `per_second_per_route = ${limits.perSecondPerRoute}`]
        : []),
      '[store]',
      `db = ${JSON.stringify(dbPath)}`,
      'lock_timeout_seconds = 10',
      '[report]',
      `out_dir = ${JSON.stringify(outDir)}`,
      `prices = ${JSON.stringify(join(REPO, 'config/prices.toml'))}`,
      extraToml,
    ].join('\n'),
  );
  const env: NodeJS.ProcessEnv = { USAGE_API_KEY: sb.apiKey };
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({
    json: true,
    level: 'debug',
    write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>),
  });
  return {
    dir,
    configPath,
    dbPath,
    outDir,
    sb,
    env,
    log,
    lines,
    common: { config: configPath, cwd: dir, env, log },
    cleanup: async () => {
      await sb.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The timeout of a test whose waits end on what they wait for: there only to end one that hangs, so
 *  long enough for a loaded machine (these took up to 68 s at a load average of 8 on 2 cores, past the default 60 s). */
export const HANG_MS = 180_000;

/**
 * Polls `cond` every 50 ms until it holds. A wait has no deadline of its own: it ends when what it waits
 * for happens, and the test's timeout bounds one that never does (a deadline shorter than the test's
 * failed a wait that was only slow on a loaded machine). A test failing mid-wait names what it awaited.
 */
export async function until(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  // An object, so that TypeScript sees the handler's change inside the loop.
  const wait: { state: 'waiting' | 'done' | 'abandoned' } = { state: 'waiting' };
  onTestFailed(() => {
    if (wait.state !== 'waiting') return;
    wait.state = 'abandoned'; // the test timed out or failed elsewhere: stop polling
    console.error(`failed while waiting for ${what}`);
  });
  while (!(await cond())) {
    if (wait.state === 'abandoned') throw new Error(`abandoned the wait for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  wait.state = 'done';
}

/**
 * Rows of usage that no coverage row accounts for: a batch written in part would show here. Every usage
 * row carries the run that wrote it; a run's rows per source and granularity never exceed what its
 * coverage rows recorded (later runs may have replaced some of them, never added).
 */
export async function unaccountedRows(dbPath: string): Promise<unknown[]> {
  const store = await openStore({ path: dbPath, readOnly: true, lockTimeoutMs: 10_000 });
  try {
    return await rawSql(store).query(`
      WITH usage AS (
        SELECT run_id, CASE api_version WHEN 'v1' THEN 'v1_programs' ELSE 'v2_programs' END AS source, granularity, count(*) AS n
        FROM usage_program GROUP BY ALL
        UNION ALL
        SELECT run_id, 'v2_frameworks' AS source, granularity, count(*) AS n FROM usage_framework GROUP BY ALL
      ), cov AS (
        SELECT run_id, source, granularity, sum(rows) AS n FROM coverage GROUP BY ALL
      )
      SELECT u.run_id, u.source, u.granularity, u.n AS usage_rows, cov.n AS coverage_rows
      FROM usage u LEFT JOIN cov USING (run_id, source, granularity)
      WHERE cov.n IS NULL OR u.n > cov.n`);
  } finally {
    await store.close();
  }
}

/** For one run: its coverage rows against the usage rows it wrote (equal when no later run replaced any). */
export async function runCounts(dbPath: string, runId: string): Promise<{ coverage: number; usage: number }> {
  const store = await openStore({ path: dbPath, readOnly: true, lockTimeoutMs: 10_000 });
  try {
    const [row] = await rawSql(store).query<{ coverage: unknown; usage: unknown }>(
      `SELECT (SELECT coalesce(sum(rows), 0) FROM coverage WHERE run_id = $run) AS coverage,
              (SELECT count(*) FROM usage_program WHERE run_id = $run) + (SELECT count(*) FROM usage_framework WHERE run_id = $run) AS usage`,
      { run: runId },
    );
    return { coverage: Number(row?.coverage ?? -1), usage: Number(row?.usage ?? -1) };
  } finally {
    await store.close();
  }
}

/** What a test started and must not outlive it: a child process, a scheduler, a fixture. */
type Owned = ChildProcess | { stop(): Promise<unknown> } | { cleanup(): Promise<unknown> };

/**
 * Registers an afterEach that releases what each test started, newest first: children still running
 * are SIGKILLed, schedulers stopped, fixtures removed. Returns `own`, which records a thing and returns it.
 */
export function useTeardown(): <T extends Owned>(thing: T) => T {
  const owned: Owned[] = [];
  afterEach(async () => {
    for (const t of owned.splice(0).reverse()) {
      if (t instanceof ChildProcess) {
        if (t.exitCode === null && t.signalCode === null) t.kill('SIGKILL');
      } else if ('stop' in t) await t.stop();
      else await t.cleanup();
    }
  });
  return (thing) => {
    owned.push(thing);
    return thing;
  };
}

/** Consumption pages the fixture's sandbox has served so far. */
export function consumptionRequests(fx: Fixture): number {
  return Object.entries(fx.sb.stats().byRoute)
    .filter(([route]) => route.startsWith('/consumption_history'))
    .reduce((n, [, c]) => n + c, 0);
}

/** A child's JSON log lines as they come (a line that is not JSON is kept as { msg }). */
export function jsonLines(stream: Readable): Record<string, unknown>[] {
  const logs: Record<string, unknown>[] = [];
  let rest = '';
  stream.on('data', (d: Buffer) => {
    const lines = (rest + d.toString()).split('\n');
    rest = lines.pop() ?? '';
    for (const l of lines) {
      try {
        logs.push(JSON.parse(l) as Record<string, unknown>);
      } catch {
        logs.push({ msg: l });
      }
    }
  });
  return logs;
}
