// The daemon killed with SIGKILL in the middle of a job: its restart takes the dead holder's lock at
// once, marks the run it left `running` as interrupted, and runs its start-up catch-up to the end.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPaths, readLockHolder } from '../../src/app/lock.js';
import { openStore } from '../../src/store/store.js';
import { distModule } from '../support/child.js';
import {
  consumptionRequests,
  fixture,
  jsonLines,
  useTeardown,
  until,
  type Fixture,
  HANG_MS,
} from '../support/fixture.js';

const RARE = '0 0 0 1 1 *';
// Each request takes this long, so that the first daemon is still collecting when it is killed.
const LATENCY_MS = 150;
const FIXTURES = join(import.meta.dirname, 'fixtures');

const own = useTeardown();

/** Starts the daemon (start-up catch-up on, cron slots far away) and collects its JSON log lines. */
function daemon(fx: Fixture): { child: ChildProcess; logs: Record<string, unknown>[] } {
  const options = { config: fx.configPath, cwd: fx.dir, cron: { hourly: RARE, daily: RARE, monthly: RARE } };
  const child = spawn(
    process.execPath,
    [join(FIXTURES, 'run-schedule.mjs'), distModule('src/cli/schedule.ts'), JSON.stringify(options)],
    {
      cwd: fx.dir,
      env: { ...process.env, USAGE_API_KEY: fx.sb.apiKey },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  own(child);
  const logs = jsonLines(child.stderr);
  return { child, logs };
}

describe('the daemon after a crash', { timeout: HANG_MS }, () => {
  it('SIGKILLed mid-job, its restart takes the lock over at once and runs the catch-up', async () => {
    const f = own(await fixture({ latencyMs: LATENCY_MS, fast: true }));
    const fx = f;
    const first = daemon(fx);
    await until(() => first.logs.some((l) => l.msg === 'job started'), 'the first daemon to start its catch-up');
    await until(() => consumptionRequests(fx) >= 3, 'the collection to be under way');
    const killed = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await killed;
    // As after a crash: the lock directory and its note naming the dead daemon stay behind.
    expect(existsSync(lockPaths(fx.dbPath).lock)).toBe(true);
    expect(readLockHolder(fx.dbPath)?.pid).toBe(first.child.pid);

    const second = daemon(fx);
    const finished = (l: Record<string, unknown>) => l.msg === 'job finished' && l.outcome === 'complete';
    await until(() => second.logs.some(finished), 'the restarted daemon to finish its catch-up');
    expect(second.logs.some((l) => l.msg === 'run lock left by a process that is no longer running: taken over')).toBe(
      true,
    );
    expect(second.logs.some((l) => String(l.msg).startsWith('skipped'))).toBe(false);

    const stopped = new Promise((r) => second.child.once('exit', r));
    second.child.kill('SIGTERM');
    await stopped;
    const store = await openStore({ path: fx.dbPath, readOnly: true });
    try {
      const runs = (await store.runs.last(1000)).reverse();
      expect(runs[0]?.status).toBe('interrupted'); // the run the SIGKILL cut short
      expect(runs.some((r) => r.status === 'complete')).toBe(true);
      expect(runs.filter((r) => r.status === 'running')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
