import { describe, expect, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { startScheduler, type JobRun } from '../../src/schedule/daemon.js';
import { acquireRunLock, readLockHolder, RunLockBusyError, withRunLock } from '../../src/app/lock.js';
import { fixture, useTeardown, unaccountedRows, until, HANG_MS } from '../support/fixture.js';

const EVERY_SECOND = '* * * * * *';
const RARE = '0 0 0 1 1 *';
// Slow enough that a first collection spans several cron slots.
const LATENCY_MS = 120;

const own = useTeardown();

describe('no overlap', { timeout: HANG_MS }, () => {
  it('a job whose previous run is still going is skipped, and runs never overlap', async () => {
    const f = own(await fixture({ latencyMs: LATENCY_MS }));
    // stop() waits for the abandoned run to end (its finished_at is asserted below), not the 4 s it gives a
    // daemon that is exiting: on a loaded machine the run took longer to wind down and was still running.
    const scheduler = own(
      await startScheduler({
        ...f.common,
        catchUp: false,
        stopGraceMs: HANG_MS,
        cron: { hourly: EVERY_SECOND, daily: RARE, monthly: RARE },
      }),
    );
    const s = scheduler;
    await until(() => s.runs.filter((r) => r.outcome === 'skipped').length >= 2, 'two skipped slots');
    await scheduler.stop();

    // One run did the work; every slot that came round meanwhile was skipped, inside that run's time.
    const worked = s.runs.filter((r) => r.outcome !== 'skipped');
    expect(worked).toHaveLength(1);
    const [run] = worked as [JobRun];
    const skipped = s.runs.filter((r) => r.outcome === 'skipped');
    for (const k of skipped) {
      expect(k.detail).toBe('the previous hourly run is still in progress');
      expect(k.started_at >= run.started_at && k.started_at <= run.finished_at!, JSON.stringify({ run, k })).toBe(true);
    }
    expect(f.lines.some((l) => l.msg === 'hourly: skipped: the previous hourly run is still in progress')).toBe(true);
    expect(await unaccountedRows(f.dbPath)).toEqual([]);
  });

  it('a job finding the lock held by another process skips to its next slot, naming the holder', async () => {
    const f = own(await fixture({ fast: true }));
    const scheduler = own(
      await startScheduler({
        ...f.common,
        catchUp: false,
        lockWaitMs: 300,
        cron: { hourly: RARE, daily: RARE, monthly: RARE },
      }),
    );
    const held = await acquireRunLock(f.dbPath, { waitMs: 0, command: 'collect' });
    try {
      const run = await scheduler.trigger('hourly');
      expect(run!.outcome).toBe('skipped');
      expect(run!.detail).toBe(`pid ${process.pid} (\`collect\`) since ${held.holder.started_at} holds the lock`);
      expect(
        f.lines.some(
          (l) => l.level === 'warn' && String(l.msg).startsWith(`skipped: pid ${process.pid} (\`collect\`)`),
        ),
      ).toBe(true);
    } finally {
      await held.release();
    }
    // Free again: the next slot runs.
    const next = await scheduler.trigger('hourly');
    expect(['complete', 'partial']).toContain(next!.outcome);
  });

  it('a collect started while the daemon holds the lock waits and then runs, or gives up with a clear message', async () => {
    const f = own(await fixture({ latencyMs: 2 * LATENCY_MS, fast: true }));
    const scheduler = own(
      await startScheduler({ ...f.common, catchUp: false, cron: { hourly: RARE, daily: RARE, monthly: RARE } }),
    );
    const daemonRun = scheduler.trigger('hourly');
    const db = f.dbPath;
    await until(() => readLockHolder(db)?.command === 'schedule hourly', 'the daemon to take the lock');

    // A short wait: refused, saying who holds it and what to do.
    const refused = await withRunLock(db, { waitMs: 300, command: 'collect', cwd: f.dir }, async () => 'ran').catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RunLockBusyError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^another collection \\(pid ${process.pid}, \`schedule hourly\`, since \\S+\\) holds the lock on usage\\.duckdb; it will be released when that run ends — try again later$`,
      ),
    );

    // A long wait: runs as soon as the daemon's run ends.
    const common = f.common;
    let lockedAt = 0;
    const result = await withRunLock(db, { waitMs: 30_000, command: 'collect' }, async (lock) => {
      lockedAt = Date.now();
      return collectCommand({ ...common, granularity: 'daily', signal: lock.signal });
    });
    const run = (await daemonRun)!;
    expect(['complete', 'partial']).toContain(run.outcome);
    expect(['complete', 'partial']).toContain(result.status);
    expect(lockedAt).toBeGreaterThanOrEqual(Date.parse(run.finished_at!));
    expect(await unaccountedRows(db)).toEqual([]);
  });
});
