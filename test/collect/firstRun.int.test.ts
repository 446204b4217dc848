// A first collection of an account with many programs, over HTTP against the sandbox, run as the command
// line runs it: consumption is committed before the inventory's per-program listings start; the first
// SIGINT/SIGTERM at any moment (consumption, inventory, publishing) exits 130/143 leaving no lock, and a
// re-run finishes the job without re-sending what was committed; `status` answers while a collect runs.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { lockPaths } from '../../src/app/lock.js';
import { analystCopyPath } from '../../src/store/publish.js';
import { cli as runCli, startCli, type CliRun } from '../support/cli.js';
import { fixture, until, type Fixture, HANG_MS } from '../support/fixture.js';
import { completeWindows, storedSums, truthSums, usageFingerprint } from '../support/usage.js';
import { rawSql } from '../../src/store/rawSql.js';

/** A run still going after this long is killed and fails its test: a hang, not a slow run. */
const GUARD_MS = 300_000;
const NOW = Date.parse('2026-11-21T10:30:00Z');
const RANGE = ['--from', '2026-11-18', '--to', '2026-11-21', '--granularity', 'daily'];
const LISTINGS = ['/programs/{id}/frameworks', '/programs/{id}/snapshots'];
const CONSUMPTION = [
  '/consumption_history/programs',
  '/consumption_history/v2/programs',
  '/consumption_history/v2/frameworks',
];

/** A collect of RANGE into `db`, run as the command line runs it, with the fixture's config and key. */
function start(f: Fixture, db: string, env: NodeJS.ProcessEnv = {}): CliRun {
  return startCli(['collect', '--config', f.configPath, '--db', db, ...RANGE], {
    cwd: f.dir,
    env: { HOME: f.dir, ...f.env, ...env },
    guardMs: GUARD_MS,
  });
}

function cli(f: Fixture, args: string[]) {
  return runCli(args, { cwd: f.dir, env: { HOME: f.dir, ...f.env }, guardMs: GUARD_MS });
}

const phaseSeen = (r: CliRun, phase: string) => () => r.lines().some((l) => l.msg === 'phase' && l.phase === phase);

async function lastRun(db: string) {
  const store = await openStore({ path: db, readOnly: true });
  try {
    return (await store.runs.last(1))[0]!;
  } finally {
    await store.close();
  }
}

/** Everything the database holds apart from which run wrote it and when. */
async function contents(db: string): Promise<string[]> {
  const store = await openStore({ path: db, readOnly: true });
  try {
    const dims = await rawSql(store).query<{ line: string }>(
      `SELECT concat_ws('|', 'p', program_id, org_id, name, region_id, created_at, deleted_at IS NULL) AS line FROM programs
       UNION ALL SELECT concat_ws('|', 'f', framework_id, program_id, name, current_state, created_at, deleted_at IS NULL) FROM frameworks
       UNION ALL SELECT concat_ws('|', 's', snapshot_id, program_id, name, source_framework_id, created_at, expires_at, deleted_at IS NULL) FROM snapshots
       ORDER BY line`,
    );
    return [...(await usageFingerprint(store)), ...dims.map((d) => d.line)];
  } finally {
    await store.close();
  }
}

describe('first collection of many programs', { timeout: HANG_MS }, () => {
  let f: Fixture;
  let reference: { inventoryRequests: number; contents: string[] };

  beforeAll(async () => {
    f = await fixture({ scenario: 'medium', now: NOW, advance: false, latencyMs: 20, fast: true });
    const db = join(f.dir, 'reference.duckdb');
    f.sb.resetStats();
    const r = start(f, db);
    expect((await r.done).code).toBe(0);
    const stats = f.sb.stats();
    // Every consumption request was sent before the first per-program listing.
    const lastConsumption = Math.max(...CONSUMPTION.map((c) => stats.lastSeq[c] ?? 0));
    const firstListing = Math.min(...LISTINGS.map((c) => stats.firstSeq[c] ?? Infinity));
    expect(lastConsumption).toBeGreaterThan(0);
    expect(Number.isFinite(firstListing)).toBe(true);
    expect(lastConsumption).toBeLessThan(firstListing);
    const run = await lastRun(db);
    expect(run.status).toBe('complete');
    // Two listings per live program plus the programs listing: far more than the consumption requests.
    expect(run.inventoryRequests).toBe(
      (stats.byRoute['/programs'] ?? 0) + LISTINGS.reduce((n, l) => n + (stats.byRoute[l] ?? 0), 0),
    );
    expect(run.inventoryRequests).toBeGreaterThan(run.requests - run.inventoryRequests);
    // The last stderr line is the run's summary, with the fields of `status --json`'s last run.
    const summary = r.lines().at(-1)!;
    expect(summary).toMatchObject({
      msg: 'run finished',
      runId: run.runId,
      status: 'complete',
      requests: run.requests,
      inventoryRequests: run.inventoryRequests,
    });
    expect(r.output().stdout).toBe(''); // no human summary off a terminal
    reference = { inventoryRequests: run.inventoryRequests, contents: await contents(db) };
  });
  afterAll(async () => f?.cleanup());

  it('stores exactly the values the sandbox reports', async () => {
    const store = await openStore({ path: join(f.dir, 'reference.duckdb'), readOnly: true });
    try {
      for (const source of ['v1_programs', 'v2_programs', 'v2_frameworks'] as const) {
        const windows = await completeWindows(store, source, 'daily');
        expect(windows.length).toBeGreaterThan(0);
        expect(await storedSums(store, source, 'daily')).toEqual(truthSums(f.sb, source, 'daily', windows, NOW));
      }
      // Every live program with consumption is named once the inventory ran.
      const live = new Set(
        f.sb.world.programs.filter((p) => p.deleted_at === undefined || p.deleted_at > NOW).map((p) => p.id),
      );
      const named = await rawSql(store).query<{ program_id: string; name: string | null }>(
        `SELECT DISTINCT u.program_id, p.name FROM usage_program u LEFT JOIN programs p USING (program_id)`,
      );
      const liveUsed = named.filter((n) => live.has(n.program_id));
      expect(liveUsed.length).toBeGreaterThan(0);
      expect(liveUsed.filter((n) => n.name === null)).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a re-run right after spends no request on the inventory', async () => {
    // The first run is the reference's: its file, rather than the same collection again.
    const db = join(f.dir, 'steady.duckdb');
    copyFileSync(join(f.dir, 'reference.duckdb'), db);
    expect((await start(f, db).done).code).toBe(0);
    expect((await lastRun(db)).inventoryRequests).toBe(0);
  });

  it('a later run asks for a program consumption names and the inventory does not know by id, not the listing', async () => {
    const db = join(f.dir, 'by-id.duckdb');
    copyFileSync(join(f.dir, 'reference.duckdb'), db);
    const store = await openStore({ path: db });
    const [gone] = await rawSql(store).query<{ program_id: string }>(
      'SELECT DISTINCT program_id FROM usage_program JOIN programs USING (program_id) WHERE deleted_at IS NULL ORDER BY 1 LIMIT 1',
    );
    // A program created since: consumption of this run names it (its rows are new), the inventory does not.
    for (const table of ['programs', 'usage_program_buckets', 'usage_framework_buckets']) {
      await rawSql(store).run(`DELETE FROM ${table} WHERE program_id = $id`, { id: gone!.program_id });
    }
    await rawSql(store).run(`DELETE FROM inventory_sought WHERE kind = 'program' AND id = $id`, {
      id: gone!.program_id,
    });
    await store.close();
    f.sb.resetStats();
    expect((await start(f, db).done).code).toBe(0);
    const stats = f.sb.stats();
    expect(stats.byRoute['/programs/{id}']).toBe(1);
    expect(stats.byRoute['/programs'] ?? 0).toBe(0);
    expect((await lastRun(db)).inventoryRequests).toBe(1);
    expect(await contents(db)).toEqual(reference.contents);
  });

  it('an old programs listing is re-read within the refresh share of the run', async () => {
    const db = join(f.dir, 'old-listing.duckdb');
    copyFileSync(join(f.dir, 'reference.duckdb'), db);
    const store = await openStore({ path: db });
    await rawSql(store).run(
      "UPDATE inventory_state SET value = '2026-11-01T00:00:00.000Z' WHERE key = 'programs_listed_at'",
    );
    await store.close();
    f.sb.resetStats();
    expect((await start(f, db).done).code).toBe(0);
    const run = await lastRun(db);
    // 380 programs: one page of the listing (400 a page), within max(1, 4% of the run's consumption requests).
    expect(f.sb.stats().byRoute['/programs']).toBe(1);
    expect(run.inventoryRequests).toBe(1);
    expect(run.inventoryRequests).toBeLessThanOrEqual(
      Math.max(1, Math.floor(0.04 * (run.requests - run.inventoryRequests))),
    );
    expect(await contents(db)).toEqual(reference.contents);
  });

  const MOMENTS = ['consumption', 'inventory', 'publishing'] as const;
  const SIGNALS = [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const;
  for (const moment of MOMENTS) {
    for (const [signal, code] of SIGNALS) {
      it(`${signal} during ${moment}: exits ${code}, no lock left, a re-run completes as one uninterrupted run`, async () => {
        const db = join(f.dir, `${moment}-${signal}.duckdb`);
        f.sb.resetStats();
        const r = start(f, db, moment === 'publishing' ? { USAGE_HOLD_PHASE: 'publishing:20000' } : {});
        await until(phaseSeen(r, moment), `phase ${moment}`);
        if (moment === 'inventory')
          await until(() => (f.sb.stats().byRoute[LISTINGS[0]!] ?? 0) >= 10, 'listings under way');
        if (moment === 'publishing') {
          // `status` while the first collect holds the database and has published nothing: exit 0, says so.
          const s = await cli(f, ['status', '--config', f.configPath, '--db', db, '--json']);
          expect(s.code, s.stderr).toBe(0);
          const st = JSON.parse(s.stdout) as {
            running?: {
              pid: number;
              requestsDone: number | null;
              requestsPlanned: number | null;
              phase: string | null;
            };
          };
          expect(st.running?.pid).toBe(r.proc.pid);
          expect(st.running?.phase).toBe('publishing');
          expect(st.running?.requestsDone).toBeGreaterThan(0);
          expect(st.running!.requestsPlanned).toBeGreaterThanOrEqual(st.running!.requestsDone!);
        }
        const sent = Date.now();
        r.proc.kill(signal);
        const exit = await r.done;
        expect(exit.code, JSON.stringify(exit).slice(0, 3000)).toBe(code);
        expect(Date.now() - sent).toBeLessThan(5_000);
        const paths = lockPaths(db);
        expect(existsSync(paths.lock) || existsSync(paths.note) || existsSync(paths.progress)).toBe(false);
        const interrupted = await lastRun(db);
        // Stopped while publishing, everything was already collected: the run is complete, the copy whole.
        expect(interrupted.status).toBe(moment === 'publishing' ? 'complete' : 'interrupted');
        if (moment !== 'consumption') expect(existsSync(analystCopyPath(db))).toBe(true);

        // The re-run takes the lock at once and completes; together the two runs listed each thing once.
        const again = start(f, db);
        if (moment === 'publishing') {
          await until(phaseSeen(again, 'consumption'), 'the re-run under way');
        }
        expect((await again.done).code).toBe(0);
        const rerun = await lastRun(db);
        expect(rerun.status).toBe('complete');
        expect(interrupted.inventoryRequests + rerun.inventoryRequests).toBe(reference.inventoryRequests);
        expect(await contents(db)).toEqual(reference.contents);
      });
    }
  }

  it('status during a later collect reads the published copy and names the running collect', async () => {
    const db = join(f.dir, 'publishing-SIGINT.duckdb');
    const r = start(f, db, { USAGE_HOLD_PHASE: 'publishing:20000' });
    await until(phaseSeen(r, 'publishing'), 'phase publishing');
    const s = await cli(f, ['status', '--config', f.configPath, '--db', db]);
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout).toContain(`collection running: pid ${r.proc.pid}`);
    expect(s.stdout).toMatch(/usage rows: [1-9]/);
    r.proc.kill('SIGINT');
    expect((await r.done).code).toBe(130);
  });
});
