// A hostile or broken API, and an unlucky operator: nothing wrong is ever stored, every wait is bounded,
// the key stays private, input is refused before any side effect. Each case runs the real command line
// against a server of the test kit and checks the exit code, the message, and that the usage tables
// are byte-for-byte what they were.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  copyFileSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireRunLock, lockPaths } from '../../src/app/lock.js';
import { openStore } from '../../src/store/store.js';
import { cli, errorMessage, failedScopes, startCli, usageTablesDigest } from '../support/cli.js';
import { HOSTILE_KEY, HOSTILE_ORG, startHostileServer, type HostileServer } from '../support/hostile-server.js';
import { rawSql } from '../../src/store/rawSql.js';

const DAY = 86_400_000;
const NO_SOCKETS = resolve('test/support/no-sockets.cjs');
const ENV = { USAGE_API_KEY: HOSTILE_KEY };
const CONFIG = `
[api]
max_body_mb = 1
max_retries = 1

[collect]
max_pages = 5

[store]
lock_timeout_seconds = 5
`;

/** A pid that certainly belongs to no running process: a child that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('collect against a hostile API', () => {
  let api: HostileServer;
  const dir = mkdtempSync(join(tmpdir(), 'usage-hostile-'));
  const db = join(dir, 'usage.duckdb');
  const config = join(dir, 'usage.toml');
  // One explicit daily window well inside the look-back, so that every run asks for the same window.
  const today = Math.floor(Date.now() / DAY) * DAY;
  const from = new Date(today - 10 * DAY).toISOString().slice(0, 10);
  const to = new Date(today - 5 * DAY).toISOString().slice(0, 10);
  const collectArgs = (...extra: string[]) => [
    'collect',
    '--config',
    config,
    '--db',
    db,
    '--base-url',
    api.baseUrl,
    '--orgs',
    HOSTILE_ORG,
    '--granularity',
    'daily',
    '--sources',
    'v2_programs',
    '--inventory',
    'never',
    '--from',
    from,
    '--to',
    to,
    ...extra,
  ];
  /** collectArgs with a config whose lock timeout is `seconds` (the file's own waits 5 s). */
  const withLockTimeout = (seconds: number, ...extra: string[]) => {
    const cfg = join(dir, `lock-${seconds}.toml`);
    writeFileSync(cfg, CONFIG.replace('lock_timeout_seconds = 5', `lock_timeout_seconds = ${seconds}`));
    const args = collectArgs(...extra);
    args[args.indexOf('--config') + 1] = cfg;
    return args;
  };
  let before: { digest: string; rows: number };

  beforeAll(async () => {
    writeFileSync(config, CONFIG);
    api = await startHostileServer();
    const r = await cli(collectArgs(), { env: ENV });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    before = await usageTablesDigest(db);
    expect(before.rows).toBe(12); // 2 programs x 3 days x 2 metrics
  });
  afterAll(async () => api?.close());

  async function expectUnchanged() {
    expect(await usageTablesDigest(db)).toEqual(before);
    const store = await openStore({ path: db, readOnly: true });
    try {
      // The window's earlier complete coverage stays beside the failure.
      const cov = await rawSql(store).query<{ status: string }>('SELECT status FROM coverage ORDER BY collected_at');
      expect(cov[0]?.status).toBe('complete');
    } finally {
      await store.close();
    }
  }

  it.each([
    ['a string', '"abc"', /expected a non-negative integer, got "abc"/],
    ['a float', '1.5', /expected an integer, got 1\.5/],
    ['2^63', '9223372036854775808', /9223372036854775808 is beyond the int64 range/],
    ['a negative', '-1', /expected a non-negative integer, got -1/],
    ['a boolean', 'true', /expected a non-negative integer, got true/],
  ])(
    'refuses %s as a value: exit 2, the request id and the path named, nothing changed',
    async (_what, literal, problem) => {
      api.set({ kind: 'value', literal });
      const r = await cli(collectArgs(), { env: ENV });
      expect(r.code).toBe(2);
      // Off a terminal the failure is a JSON warning on stderr (the human summary is for terminals).
      const [failed, ...more] = failedScopes(r.stderr);
      expect(more).toEqual([]);
      expect(failed).toMatchObject({ source: 'v2_programs', granularity: 'daily', org: 'org-hostile' });
      expect(failed!.error).toMatch(
        /request id hostile-\d+\): a "value" is missing or not of the documented type at \$\.programs\[1\]\.periods\[0\]\.consumption\[2\]\.metrics\[1\]\.value/,
      );
      expect(failed!.error).toMatch(problem);
      await expectUnchanged();
    },
  );

  it('stops a cursor that changes on every page at the stated bound: exit 2, nothing changed', async () => {
    api.set({ kind: 'endless-cursor' });
    const sent = api.requests.length;
    const r = await cli(collectArgs(), { env: ENV });
    expect(r.code).toBe(2);
    expect(failedScopes(r.stderr)[0]?.error).toMatch(
      /still sending pages after 5, more than collect\.max_pages \(no inventory of programs yet\) can justify/,
    );
    expect(api.requests.length - sent).toBe(5);
    await expectUnchanged();
  });

  // No bound stops this early: collect.max_pages at its default (1000) without an inventory, a page bound of 22
  // with an inventory of 1,000 programs. The id that comes again on page 2 does, and no page 3 is asked for.
  it.each([
    ['without an inventory', 0, /holds program again-0, already on page 1: a cursor that runs away/],
    ['with an inventory of 1,000 programs', 1000, /holds program again-0, already on page 1: a cursor that runs away/],
  ])(
    'stops a cursor that hands back the first page under new cursors at its second page, %s: exit 2, nothing changed',
    async (_what, inventory, message) => {
      const unbound = join(dir, 'unbound.toml');
      writeFileSync(unbound, CONFIG.replace('max_pages = 5', 'max_pages = 1000'));
      if (inventory > 0) {
        const store = await openStore({ path: db });
        try {
          const programs = Array.from({ length: inventory }, (_, i) => ({
            program_id: `inv-${i}`,
            org_id: HOSTILE_ORG,
            name: null,
            region_id: null,
            created_at: null,
          }));
          await store.inventory.upsertPrograms(programs, { seenAt: new Date(), completeForOrgs: [HOSTILE_ORG] });
        } finally {
          await store.close();
        }
      }
      api.set({ kind: 'same-page' });
      const sent = api.requests.length;
      const r = await cli(
        collectArgs().map((a) => (a === config ? unbound : a)),
        { env: ENV },
      );
      expect(r.code).toBe(2);
      expect(failedScopes(r.stderr)[0]?.error).toMatch(message);
      expect(failedScopes(r.stderr)[0]?.error).toMatch(/request id hostile-\d+/);
      // Two pages asked for, the second the one that repeats: the guard comes before the next request.
      expect(api.requests.length - sent).toBe(2);
      await expectUnchanged();
      api.set({ kind: 'good' });
    },
  );

  it('holds an empty list over existing data unless --accept-deletions', async () => {
    api.set({ kind: 'empty' });
    const r = await cli(collectArgs(), { env: ENV });
    expect(r.code).toBe(2);
    expect(failedScopes(r.stderr)[0]?.error).toMatch(
      /would delete 12 of the window's 12 stored rows \(100%, more than the 50% allowed by collect\.max_deletion_share\): held, nothing was changed\. If the usage really is gone, re-run with --accept-deletions/,
    );
    await expectUnchanged();
    const accepted = await cli(collectArgs('--accept-deletions'), { env: ENV });
    expect(accepted.code).toBe(0);
    expect(await usageTablesDigest(db)).toMatchObject({ rows: 0 });
    // Put the data back for the cases that follow.
    api.set({ kind: 'good' });
    expect((await cli(collectArgs(), { env: ENV })).code).toBe(0);
    before = await usageTablesDigest(db);
    expect(before.rows).toBe(12);
  });

  it('an organization not eligible for either API version (403 on both) is a complete answer: exit 0, coverage not_eligible', async () => {
    api.set({ kind: 'not-eligible' });
    const freeDb = join(dir, 'free.duckdb');
    const args = collectArgs('--db', freeDb, '--sources', 'v1_programs,v2_programs');
    const r = await cli(args, { env: ENV });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stderr).toMatch(/"msg":"run finished".*"status":"complete"/);
    const store = await openStore({ path: freeDb, readOnly: true });
    try {
      const cov = await rawSql(store).query<{ source: string; status: string }>(
        'SELECT source, status FROM coverage ORDER BY source',
      );
      expect(cov).toEqual([
        { source: 'v1_programs', status: 'not_eligible' },
        { source: 'v2_programs', status: 'not_eligible' },
      ]);
    } finally {
      await store.close();
    }
    api.set({ kind: 'good' });
  });

  it('refuses an endless body at the size cap: exit 2, nothing changed', async () => {
    api.set({ kind: 'endless-body' });
    const r = await cli(collectArgs(), { env: ENV });
    expect(r.code).toBe(2);
    expect(failedScopes(r.stderr)[0]?.error).toMatch(
      /answered with a body larger than 1 MB \(request id [\w-]+\); refused without reading it all/,
    );
    await expectUnchanged();
  });

  it('stops within 5 s on SIGTERM while a Retry-After of a day is pending: exit 143, lock released, nothing changed', async () => {
    api.set({ kind: 'retry-after', seconds: 86_400 });
    const first = api.nextRequest();
    const run = startCli(collectArgs(), { env: ENV, guardMs: 60_000 });
    await first;
    run.proc.kill('SIGTERM');
    const stopped = Date.now();
    const guard = setTimeout(() => run.proc.kill('SIGKILL'), 5_000);
    const r = await run.done;
    clearTimeout(guard);
    const tookMs = Date.now() - stopped;
    expect(r.signal).toBeNull(); // it exited by itself, not by the 5 s SIGKILL
    expect(r.code).toBe(143);
    expect(tookMs).toBeLessThan(5_000);
    expect(r.stderr).toMatch(/stopped by SIGTERM; what was committed before is kept/);
    expect(existsSync(lockPaths(db).lock)).toBe(false);
    await expectUnchanged();
    const store = await openStore({ path: db, readOnly: true });
    try {
      const [run] = await store.runs.last(1);
      expect(run?.status).toBe('interrupted');
    } finally {
      await store.close();
    }
  });

  it('refuses a base URL without its version segment, or of another scheme, with exit 64 and no request', async () => {
    api.set({ kind: 'good' });
    const sent = api.requests.length;
    const cases: [string, RegExp][] = [
      [
        api.baseUrl.replace(/\/v1$/, ''),
        /has no version segment: give the API root including it, e\.g\. http:\/\/127\.0\.0\.1:\d+\/v1/,
      ],
      ['ftp://127.0.0.1/v1', /the scheme ftp: is not served; use https:\/\//],
      ['file:///etc/v1', /the scheme file: is not served/],
    ];
    for (const [url, message] of cases) {
      const args = collectArgs();
      args[args.indexOf('--base-url') + 1] = url;
      const r = await cli(args, { env: ENV });
      expect(r.code, url).toBe(64);
      expect(r.stderr).toMatch(message);
    }
    expect(api.requests.length).toBe(sent);
    await expectUnchanged();
  });

  it('refuses a --db it cannot create with 64, naming the errno and the path, before the lock', async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, '');
    const args = collectArgs();
    args[args.indexOf('--db') + 1] = join(file, 'usage.duckdb');
    const r = await cli(args, { env: ENV });
    expect(r.code).toBe(64);
    expect(errorMessage(r.stderr)).toBe(
      `--db ${file}: cannot write under ${file} (ENOTDIR); choose a folder this user can write.`,
    );
  });

  it('refuses a bad flag at once, with 64, while another run holds the lock', async () => {
    const held = await acquireRunLock(db, { waitMs: 0, command: 'test holder' });
    // A wait on the lock would last 10 minutes and be stopped by the guard; a refusal at once ends within
    // it however loaded the machine is (a 4 s guard killed a refusal's slow start under load).
    const args = withLockTimeout(600, '--granularity', 'weekly');
    try {
      const r = await cli(args, { env: ENV, guardMs: 60_000 });
      expect(r.killedAfterMs).toBeUndefined();
      expect(r.code).toBe(64);
      expect(errorMessage(r.stderr)).toMatch(/--granularity "weekly": unknown value "weekly"/);
    } finally {
      await held.release();
    }
  });

  it('takes over at once a lock whose holder is dead, marks the runs it left running interrupted, and removes its stray copy', async () => {
    const store = await openStore({ path: db });
    await rawSql(store).run(
      "INSERT INTO collection_runs (run_id, command, started_at, status) VALUES ('crashed-run', 'collect', now(), 'running')",
    );
    await store.close();
    const dead = deadPid();
    mkdirSync(lockPaths(db).lock);
    writeFileSync(
      lockPaths(db).note,
      JSON.stringify({
        pid: dead,
        command: 'collect',
        started_at: new Date().toISOString(),
        hostname: (await import('node:os')).hostname(),
      }),
    );
    const stray = join(dir, `usage.analyst.duckdb.tmp-${dead}`);
    writeFileSync(stray, 'half a copy');
    // lock_timeout 0: one attempt only; a lock that is merely stale-by-age would refuse it.
    const args = withLockTimeout(0);
    const r = await cli(args, { env: ENV });
    expect(r.stderr).toMatch(/run lock left by a process that is no longer running: taken over/);
    expect(r.code).toBe(0);
    expect(existsSync(stray)).toBe(false);
    const check = await openStore({ path: db, readOnly: true });
    try {
      const [row] = await rawSql(check).query<{ status: string }>(
        "SELECT status FROM collection_runs WHERE run_id = 'crashed-run'",
      );
      expect(row?.status).toBe('interrupted');
    } finally {
      await check.close();
    }
    expect(await usageTablesDigest(db)).toMatchObject({ rows: before.rows });
  });

  it('refuses a truncated database with exit 1 and never publishes it', async () => {
    const copy = join(dir, 'broken.duckdb');
    copyFileSync(db, copy);
    truncateSync(copy, Math.floor(statSync(copy).size / 2));
    const args = collectArgs();
    args[args.indexOf('--db') + 1] = copy;
    const r = await cli(args, { env: ENV });
    expect(r.code).toBe(1);
    // DuckDB reads blocks lazily: where the cut falls (the file's layout varies with its checkpoints), the
    // first missing block is met by a query (IO Error) or by a commit (TransactionContext Error). Either way
    // the same refusal.
    expect(r.stderr).toMatch(
      /the database .*broken\.duckdb cannot be read: (IO|TransactionContext) Error: .*Could not read enough bytes.*It was not changed/,
    );
    expect(existsSync(join(dir, 'broken.analyst.duckdb'))).toBe(false);
  });
});

describe('the key only where it belongs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-https-'));
  const db = join(dir, 'data', 'usage.duckdb');
  const config = join(dir, 'usage.toml');
  writeFileSync(config, '[api]\nmax_retries = 0\n');
  const args = (...extra: string[]) => [
    'collect',
    '--config',
    config,
    '--sources',
    'v2_programs',
    '--db',
    db,
    '--base-url',
    'http://10.99.0.1/v1',
    '--orgs',
    'org-a',
    '--granularity',
    'daily',
    '--inventory',
    'never',
    ...extra,
  ];

  it('refuses plain http to a non-loopback host with 64 before any socket opens, and creates nothing', async () => {
    const r = await cli(args(), { env: ENV, nodeOptions: ['--require', NO_SOCKETS] });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(
      /is plain http to another host: the API key would travel in clear text\. Use https:\/\/, or pass --insecure-http/,
    );
    expect(r.stderr).not.toMatch(/SOCKET-CONNECT-ATTEMPT/);
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('with --insecure-http goes ahead, says so, and does try to connect (the detector sees it)', async () => {
    const r = await cli(args('--insecure-http'), {
      env: { ...ENV, USAGE_API_KEY: 'x' },
      nodeOptions: ['--require', NO_SOCKETS],
    });
    expect(r.stderr).toMatch(/--insecure-http: the API key is sent in clear text to 10\.99\.0\.1/);
    expect(r.stderr).toMatch(/SOCKET-CONNECT-ATTEMPT 10\.99\.0\.1:80/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('report and status never create the database they read', () => {
  it('report with a wrong --db exits 1 naming the path and creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-nodb-'));
    const db = join(dir, 'nowhere', 'usage.duckdb');
    const r = await cli([
      'report',
      '--month',
      '2026-10',
      '--db',
      db,
      '--prices',
      resolve('config/prices.toml'),
      '--out',
      join(dir, 'out'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`The database ${db} does not exist yet`);
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('report with a missing price book refuses it with 64, saying the cause once, and creates no database', async () => {
    // A folder without a config: the database and config places are kept inside it (the defaults of a
    // checkout would point at the repository's own data/ and shipped price book).
    const dir = mkdtempSync(join(tmpdir(), 'usage-noconf-'));
    const env = { USAGE_DB: join(dir, 'data', 'usage.duckdb'), XDG_CONFIG_HOME: dir, XDG_STATE_HOME: dir };
    const r = await cli(['report', '--month', '2026-10', '--prices', 'prices.toml'], { cwd: dir, env });
    expect(r.code).toBe(64);
    // The real cause, once: errno and path.
    expect(errorMessage(r.stderr)).toBe(
      `invalid price book ${join(dir, 'prices.toml')}:\n  cannot read: ENOENT: no such file or directory`,
    );
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it('report refuses an --out it cannot write with 64, naming the errno and the path, before opening anything', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-out-'));
    writeFileSync(join(dir, 'a-file'), '');
    const out = join(dir, 'a-file', 'reports');
    const r = await cli([
      'report',
      '--month',
      '2026-10',
      '--db',
      join(dir, 'usage.duckdb'),
      '--prices',
      resolve('config/prices.toml'),
      '--out',
      out,
    ]);
    expect(r.code).toBe(64);
    expect(errorMessage(r.stderr)).toBe(
      `--out ${out}: cannot write under ${join(dir, 'a-file')} (ENOTDIR); choose a folder this user can write.`,
    );
    expect(existsSync(join(dir, 'usage.duckdb'))).toBe(false);
  });

  it('status with a wrong --db exits 1 naming the path and creates nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-nostatus-'));
    const db = join(dir, 'nowhere', 'usage.duckdb');
    const r = await cli(['status', '--db', db]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(db);
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
  });
});
