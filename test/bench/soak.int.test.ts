// The daemon soak (bench/soak.ts) in small: the built daemon driven through a few scheduled runs while
// the sandbox's and its clock advance, SIGKILLed twice and restarted; the database then equals the
// truth and the due export exists once. And the soak's own checks do fail: one stored value changed,
// or a month's export removed, is reported. The 1,000-run soak is `npm run bench:soak`.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { soak, soakPassed, type Soak } from '../../bench/soak.js';
import { checkDatabase, checkExports, dueMonths, runClock } from '../../bench/soakCheck.js';
import { silentLogger } from '../../src/log.js';
import { CLOCK_FILE_ENV, startScheduler } from '../../src/schedule/daemon.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore } from '../../src/store/store.js';

// One stored value (the first non-zero compute_unit_seconds, in the table behind the usage_program view) moved by one.
const CHANGE_ONE_SQL = `
UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds + 1
WHERE rowid = (SELECT rowid FROM usage_program_buckets WHERE compute_unit_seconds > 0 ORDER BY timeframe_start, program_id LIMIT 1)`;

// One stored row (the latest bucket's first) written a second time.
const DUPLICATE_ONE_SQL = `
INSERT INTO usage_program_buckets
SELECT * FROM usage_program_buckets ORDER BY timeframe_start DESC, program_id LIMIT 1`;

const RARE = '0 0 0 1 1 *';

let run: Soak;

beforeAll(async () => {
  run = await soak({ runs: 16, kills: 2, seed: 20_261_128 });
}, 180_000);

afterAll(async () => {
  await run?.cleanup();
});

describe('the daemon soak', () => {
  it('through scheduled runs, kills and restarts: database = truth, each due export once', () => {
    const r = run.result;
    expect(r.runs).toBeGreaterThanOrEqual(16);
    expect(r.kills).toBe(2);
    expect(r.truth.examples).toEqual([]);
    expect(r.truth.compared).toBeGreaterThan(1000);
    expect(r.db_equals_truth).toBe(true);
    expect(r.exports.problems).toEqual([]);
    expect(r.exports.expectedMonths.length).toBeGreaterThanOrEqual(1);
    expect(r.exports_once).toBe(true);
    // The clock moved on between runs: each run saw its own hour.
    expect(Date.parse(r.clock_end)).toBeGreaterThan(Date.parse(r.clock_start) + 16 * 3_600_000);
    expect(soakPassed(r)).toBe(true);
  });

  it('the daemon ran on the driven clock: every collection started within the span of the soak clock', async () => {
    const store = await openStore({ path: run.dbPath, readOnly: true });
    try {
      const runs = await store.runs.last(1000);
      expect(runs.length).toBeGreaterThan(5);
      for (const r of runs) {
        expect(runClock(r.runId)).toBeGreaterThanOrEqual(Date.parse(run.result.clock_start));
        expect(runClock(r.runId)).toBeLessThanOrEqual(Date.parse(run.result.clock_end));
      }
    } finally {
      await store.close();
    }
  });

  /** The checker's verdict on the soak's database after one statement changed it. */
  async function checkAfter(sql: string): Promise<Awaited<ReturnType<typeof checkDatabase>>> {
    const store = await openStore({ path: run.dbPath });
    try {
      await rawSql(store).run(sql);
    } finally {
      await store.close();
    }
    return checkDatabase(run.dbPath, run.sandbox.world);
  }

  it('reports a database with one value changed', async () => {
    const check = await checkAfter(CHANGE_ONE_SQL);
    expect(check.equal).toBe(false);
    expect(check.mismatches).toBe(1);
    expect(check.examples[0]).toMatch(/^differs /);
    expect(soakPassed({ ...run.result, db_equals_truth: check.equal })).toBe(false);
  });

  it('reports a row stored twice, beside the value changed before', async () => {
    const check = await checkAfter(DUPLICATE_ONE_SQL);
    // The row holds a bucket's metrics side by side: each of its values is reported once.
    const duplicates = check.examples.filter((e) => e.startsWith('duplicate '));
    expect(duplicates.length).toBeGreaterThan(0);
    expect(check.examples.filter((e) => e.startsWith('differs '))).toHaveLength(1);
    expect(check.mismatches).toBe(duplicates.length + 1);
    expect(new Set(duplicates.map((e) => e.split('|').slice(0, 7).join('|'))).size).toBe(1);
  });

  it('reports a due month whose export is missing', () => {
    const months = run.result.exports.expectedMonths;
    const month = months[0] as string;
    renameSync(join(run.outDir, month), join(run.outDir, 'moved-aside'));
    const check = checkExports(run.outDir, months);
    expect(check.once).toBe(false);
    expect(check.problems).toContain(`${month}: 0 visible entries ()`);
    expect(check.problems).toContain('moved-aside: an export nobody was due');
  });

  it('the daemon takes its clock from USAGE_SCHEDULE_CLOCK_FILE, and refuses one that holds no instant', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-soak-clock-'));
    try {
      const config = join(dir, 'usage.toml');
      // Nothing listens on port 9, and no retry: the job fails at once, after recording when it started.
      writeFileSync(
        config,
        '[api]\nbase_url = "http://127.0.0.1:9/v1"\nmax_retries = 0\n[store]\ndb = "usage.duckdb"\n',
      );
      const clock = join(dir, 'clock');
      const env = { USAGE_API_KEY: 'k'.repeat(32), [CLOCK_FILE_ENV]: clock };
      const common = {
        config,
        cwd: dir,
        env,
        log: silentLogger,
        catchUp: false,
        cron: { hourly: RARE, daily: RARE, monthly: RARE },
      };
      writeFileSync(clock, 'not a time');
      await expect(startScheduler(common)).rejects.toThrow(/does not hold an ISO date-time/);
      writeFileSync(clock, '2031-02-03T04:05:06.000Z');
      const scheduler = await startScheduler(common);
      try {
        const r = await scheduler.trigger('hourly');
        expect(r?.started_at).toBe('2031-02-03T04:05:06.000Z');
      } finally {
        await scheduler.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('knows which months are due', () => {
    const first = Date.UTC(2025, 6, 10);
    expect(dueMonths(first, Date.UTC(2025, 8, 1, 12), 2)).toEqual(['2025-06', '2025-07']);
    expect(dueMonths(first, Date.UTC(2025, 8, 2), 2)).toEqual(['2025-06', '2025-07', '2025-08']);
  });
});
