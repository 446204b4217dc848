// The daemon soak (bench/soak.ts) in small: the built daemon driven through a few scheduled runs while
// the sandbox's and its clock advance, SIGKILLed twice and restarted; the database then equals the
// truth and the due export exists once. And the soak's own checks do fail: one stored value changed,
// or a month's export removed, is reported. The 1,000-run soak is `npm run bench:soak`.
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { soak, soakPassed, type Soak } from '../../bench/soak.js';
import { checkDatabase, checkExports, dueMonths } from '../../bench/soakCheck.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore } from '../../src/store/store.js';

// One stored value, picked by its key, moved by one.
const CHANGE_ONE_SQL = `
UPDATE usage_program SET value = value + 1
WHERE rowid = (SELECT rowid FROM usage_program WHERE value > 0 ORDER BY timeframe_start, program_id, metric LIMIT 1)`;

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

  it('reports a database with one value changed', async () => {
    const store = await openStore({ path: run.dbPath });
    try {
      await rawSql(store).run(CHANGE_ONE_SQL);
    } finally {
      await store.close();
    }
    const check = await checkDatabase(run.dbPath, run.sandbox.world);
    expect(check.equal).toBe(false);
    expect(check.mismatches).toBe(1);
    expect(check.examples[0]).toMatch(/^differs /);
    expect(soakPassed({ ...run.result, db_equals_truth: check.equal })).toBe(false);
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

  it('knows which months are due', () => {
    const first = Date.UTC(2025, 6, 10);
    expect(dueMonths(first, Date.UTC(2025, 8, 1, 12), 2)).toEqual(['2025-06', '2025-07']);
    expect(dueMonths(first, Date.UTC(2025, 8, 2), 2)).toEqual(['2025-06', '2025-07', '2025-08']);
  });
});
