import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { startScheduler, type JobRun } from '../../src/schedule/daemon.js';
import { manifestPath } from '../../src/schedule/jobs.js';
import { lockPaths } from '../../src/app/lock.js';
import { fixture, useTeardown, unaccountedRows, until, HANG_MS } from '../support/fixture.js';
import { rawSql } from '../../src/store/rawSql.js';

// Cron expressions with seconds, so that slots come round during a test. RARE never fires in one.
const EVERY_2S = '*/2 * * * * *';
const EVERY_3S = '1-59/3 * * * * *';
const RARE = '0 0 0 1 1 *';

const own = useTeardown();

const finished = (runs: JobRun[], job: string, trigger?: string) =>
  runs.filter(
    (r) =>
      r.job === job &&
      r.finished_at !== null &&
      r.outcome !== 'skipped' &&
      (trigger === undefined || r.trigger === trigger),
  );

/** Runs that did work (not skipped) never overlap in time: one job at a time. */
function expectNoOverlap(runs: JobRun[]): void {
  const worked = runs
    .filter((r) => r.outcome !== 'skipped' && r.finished_at !== null)
    .sort((a, b) => a.started_at.localeCompare(b.started_at));
  for (let i = 1; i < worked.length; i++) {
    expect(
      worked[i]!.started_at >= worked[i - 1]!.finished_at!,
      `${JSON.stringify(worked[i - 1])} overlaps ${JSON.stringify(worked[i])}`,
    ).toBe(true);
  }
}

describe('scheduler', { timeout: HANG_MS }, () => {
  it('catches up at start-up, then runs its jobs on schedule; the database gets data and the missing export is written', async () => {
    // A fixed calendar: the 5th of March, so February's export is due (day 2) and missing.
    const t0 = Date.parse('2025-03-05T10:20:00Z');
    const real0 = Date.now();
    const now = () => t0 + (Date.now() - real0);
    const f = own(await fixture({ now: t0, fast: true }));
    const scheduler = own(
      await startScheduler({ ...f.common, now, cron: { hourly: EVERY_2S, daily: EVERY_3S, monthly: RARE } }),
    );
    expect(scheduler.jobs.map((j) => j.name)).toEqual(['hourly', 'daily', 'monthly']);
    expect(scheduler.jobs.every((j) => j.nextRun() instanceof Date)).toBe(true);

    const s = scheduler;
    await until(
      () =>
        finished(s.runs, 'hourly', 'schedule').length >= 1 &&
        finished(s.runs, 'daily', 'schedule').length >= 1 &&
        finished(s.runs, 'monthly').length >= 1,
      'scheduled hourly and daily runs and the export catch-up',
    );
    await scheduler.stop();

    const runs = scheduler.runs;
    // Start-up first: hourly, daily, then (queued behind any slot that fired meanwhile) the export the
    // daily run found missing.
    const worked = runs.filter((r) => r.outcome !== 'skipped');
    expect(worked.slice(0, 2).map((r) => `${r.job}/${r.trigger}`)).toEqual(['hourly/startup', 'daily/startup']);
    const catchUp = worked.filter((r) => r.job === 'monthly');
    expect(catchUp.map((r) => r.trigger)).toEqual(['catch-up']);
    expect(catchUp[0]!.started_at >= worked[1]!.finished_at!).toBe(true);
    const collections = runs.filter((r) => r.job !== 'monthly' && r.finished_at !== null && r.outcome !== 'skipped');
    for (const [i, r] of collections.entries()) {
      // The run going when stop() came is interrupted; every earlier one finished.
      expect(
        i === collections.length - 1 ? ['complete', 'partial', 'interrupted'] : ['complete', 'partial'],
        JSON.stringify(r),
      ).toContain(r.outcome);
      expect(r.run_id).toBeTruthy();
    }
    const exp = finished(runs, 'monthly')[0]!;
    expect(['complete', 'partial'], JSON.stringify(exp)).toContain(exp.outcome);
    expect(exp.month).toBe('2025-02');
    expect(existsSync(manifestPath(f.outDir, '2025-02'))).toBe(true);
    expectNoOverlap(runs);

    const store = await openStore({ path: f.dbPath, readOnly: true });
    try {
      const rows = await rawSql(store).query<{ granularity: string; n: bigint }>(
        'SELECT granularity, count(*) AS n FROM usage_program GROUP BY granularity',
      );
      const by = Object.fromEntries(rows.map((r) => [r.granularity, Number(r.n)]));
      expect(by.hourly).toBeGreaterThan(0);
      expect(by.daily).toBeGreaterThan(0);
      expect(by.monthly).toBeGreaterThan(0);
      const runIds = (await store.runs.last(1000)).map((x) => x.runId);
      for (const r of runs.filter((r) => r.run_id)) expect(runIds).toContain(r.run_id);
    } finally {
      await store.close();
    }
    expect(await unaccountedRows(f.dbPath)).toEqual([]);
    expect(existsSync(lockPaths(f.dbPath).lock)).toBe(false);
  });

  it('a failing job is logged and retried at its next slot; the daemon keeps running', async () => {
    const f = own(await fixture());
    // A key the API does not know: every collection fails at once with 401.
    const env = { USAGE_API_KEY: 'not-a-valid-key' };
    const scheduler = own(
      await startScheduler({
        ...f.common,
        env,
        catchUp: false,
        cron: { hourly: EVERY_2S, daily: RARE, monthly: RARE },
      }),
    );
    const s = scheduler;
    await until(() => finished(s.runs, 'hourly').length >= 2, 'two failed hourly runs');
    const [a, b] = finished(s.runs, 'hourly');
    expect(a!.outcome).toBe('failed');
    expect(b!.outcome).toBe('failed');
    expect(a!.detail).toMatch(/401|key/i);
    expect(f.lines.some((l) => l.level === 'error' && String(l.msg).includes('runs again at its next slot'))).toBe(
      true,
    );
    // Still scheduled after the failures.
    expect(s.jobs.find((j) => j.name === 'hourly')!.nextRun()).toBeInstanceOf(Date);
  });

  it('a slot missed while the process was frozen (the machine slept) is run on waking', async () => {
    const f = own(await fixture({ fast: true }));
    const scheduler = own(
      await startScheduler({
        ...f.common,
        catchUp: false,
        cron: { hourly: '*/3 * * * * *', daily: RARE, monthly: RARE },
      }),
    );
    const next = scheduler.jobs
      .find((j) => j.name === 'hourly')!
      .nextRun()!
      .getTime();
    // Freeze the event loop past the slot by more than cron's tolerance (1 s, counted in whole seconds), as a
    // suspended machine would.
    while (Date.now() < next + 2_200) {
      /* frozen */
    }
    const s = scheduler;
    await until(() => finished(s.runs, 'hourly').length >= 1, 'the missed slot to run');
    const run = finished(s.runs, 'hourly')[0]!;
    expect(run.trigger).toBe('missed');
    expect(['complete', 'partial']).toContain(run.outcome);
  });

  it('refuses a bad cron expression or time zone before starting', async () => {
    const f = own(await fixture());
    await expect(startScheduler({ ...f.common, cron: { hourly: 'every hour' } })).rejects.toThrow(
      /schedule\.hourly_collect "every hour" is not a cron expression/,
    );
    await expect(startScheduler({ ...f.common, env: {} })).rejects.toThrow(/No API key/);
    const g = await fixture({}, '[schedule]\ntimezone = "Mars/Olympus_Mons"');
    try {
      await expect(startScheduler(g.common)).rejects.toThrow(
        /schedule\.timezone "Mars\/Olympus_Mons" is not a time zone/,
      );
    } finally {
      await g.cleanup();
    }
  });
});
