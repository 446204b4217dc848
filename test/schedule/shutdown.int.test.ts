import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/schedule/daemon.js';
import { acquireRunLock, lockPaths } from '../../src/app/lock.js';
import { openStore } from '../../src/store/store.js';
import { distModule } from '../support/child.js';
import {
  consumptionRequests,
  fixture,
  jsonLines,
  useTeardown,
  runCounts,
  unaccountedRows,
  until,
  type Fixture,
  HANG_MS,
} from '../support/fixture.js';
import { rawSql } from '../../src/store/rawSql.js';

const RARE = '0 0 0 1 1 *';
// Each request takes this long, so that a collection is still going when the stop comes.
const LATENCY_MS = 200;
const FIXTURES = join(import.meta.dirname, 'fixtures');

const own = useTeardown();

/** After a stop: the lock is free, no run is left 'running', and no usage row lacks its coverage. */
async function expectCleanDatabase(fx: Fixture): Promise<{ run_id: string; status: string; error: string | null }> {
  expect(existsSync(lockPaths(fx.dbPath).lock)).toBe(false);
  expect(existsSync(lockPaths(fx.dbPath).note)).toBe(false);
  await (await acquireRunLock(fx.dbPath, { waitMs: 0, command: 'test' })).release();
  expect(await unaccountedRows(fx.dbPath)).toEqual([]);
  const store = await openStore({ path: fx.dbPath, readOnly: true });
  let last;
  try {
    const runs = await rawSql(store).query<{ run_id: string; status: string; error: string | null }>(
      'SELECT run_id, status, error FROM collection_runs ORDER BY started_at',
    );
    expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    last = runs.at(-1)!;
  } finally {
    await store.close();
  }
  // The interrupted run's committed batches are all there, and nothing of the batch in progress is.
  const counts = await runCounts(fx.dbPath, last.run_id);
  expect(counts.usage).toBe(counts.coverage);
  return last;
}

describe('shutdown', { timeout: HANG_MS }, () => {
  it('stop() mid-collection abandons the batch in progress, releases the lock and returns within a few seconds', async () => {
    const f = own(await fixture({ latencyMs: LATENCY_MS, fast: true }));
    const scheduler = own(
      await startScheduler({ ...f.common, catchUp: false, cron: { hourly: RARE, daily: RARE, monthly: RARE } }),
    );
    const fx = f;
    const run = scheduler.trigger('hourly');
    await until(() => consumptionRequests(fx) >= 3, 'the collection to be under way');
    const started = Date.now();
    await scheduler.stop();
    expect(Date.now() - started).toBeLessThan(5_000);
    const r = (await run)!;
    expect(r.outcome).toBe('interrupted');
    expect(r.detail).toMatch(/interrupted/);
    const last = await expectCleanDatabase(fx);
    expect(last.run_id).toBe(r.run_id);
    expect(last.error).toMatch(/interrupted/);
    // Stopped for good: nothing more is queued.
    expect(await scheduler.trigger('hourly')).toBeNull();
  });

  it('the daemon process exits 0 on SIGTERM mid-collection, with the lock released and the database consistent', async () => {
    const f = own(await fixture({ latencyMs: LATENCY_MS, fast: true }));
    const fx = f;
    const options = { config: fx.configPath, cwd: fx.dir, cron: { hourly: RARE, daily: RARE, monthly: RARE } };
    const child = spawn(
      process.execPath,
      [join(FIXTURES, 'run-schedule.mjs'), distModule('src/cli/schedule.ts'), JSON.stringify(options)],
      {
        cwd: fx.dir,
        env: { ...process.env, USAGE_API_KEY: fx.sb.apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    own(child);
    const logs = jsonLines(child.stderr);
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.once('exit', (code, signal) => r({ code, signal })),
    );
    try {
      // The start-up catch-up collection is what SIGTERM interrupts.
      await until(
        () =>
          logs.some((l) => String(l.msg).startsWith('scheduler running')) && logs.some((l) => l.msg === 'job started'),
        'the daemon to start its first job',
      );
      await until(() => consumptionRequests(fx) >= 3, 'the collection to be under way');
      const started = Date.now();
      child.kill('SIGTERM');
      const { code, signal } = await exit;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    expect(logs.some((l) => l.msg === 'received SIGTERM: stopping')).toBe(true);
    expect(logs.some((l) => l.msg === 'stopped')).toBe(true);
    const last = await expectCleanDatabase(fx);
    expect(last.error).toMatch(/interrupted/);
  });
});
