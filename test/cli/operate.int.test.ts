// Operating the installed command: a config found elsewhere (its relative paths beside it), report and
// status from another working directory, `status --check` for monitors, and `query` on the analyst copy.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import { loadPriceBook } from '../../src/billing/pricebook.js';
import { cli as runCli } from '../support/cli.js';
import { tempDir } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

/** The shipped price book's revision with the test's overlay laid over it. */
const OVERLAID = `${loadPriceBook('config/prices.toml').revision}+ours-1`;

/** The built CLI with HOME inside the test's folder, so no operator's ~/.config is read by accident. */
function cli(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const home = join(opts.cwd, 'home');
  return runCli(args, { cwd: opts.cwd, env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), ...opts.env } });
}

describe('a config elsewhere, commands from another directory', () => {
  let sb: Sandbox;
  const { dir: root, cleanup } = tempDir('usage-operate-');
  const etc = join(root, 'etc', 'usage-pipeline');
  const elsewhere = join(root, 'somewhere', 'else');
  const config = join(etc, 'usage.toml');
  const db = join(etc, 'state', 'usage.duckdb');
  const month = new Date().toISOString().slice(0, 7);
  let key: string;

  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', advance: true });
    key = sb.apiKey;
    mkdirSync(etc, { recursive: true });
    mkdirSync(elsewhere, { recursive: true });
    // Relative paths: beside the config file, whatever the working directory.
    writeFileSync(
      config,
      [
        '[api]',
        `base_url = ${JSON.stringify(sb.baseUrl)}`,
        '[collect]',
        'granularities = ["daily"]',
        '[store]',
        'db = "state/usage.duckdb"',
        '[report]',
        'out_dir = "out"',
        'formats = ["parquet"]',
        'price_overlay = "our-prices.toml"',
      ].join('\n'),
    );
    // The operator's own rate for launch compute from October 2025, laid over the shipped price book by its key.
    writeFileSync(
      join(etc, 'our-prices.toml'),
      [
        'revision = "ours-1"',
        '[[rates]]',
        'plan = "launch"',
        'metric = "compute_unit_seconds"',
        'rate = "1.06"',
        'effective_from = "2025-10-01"',
        'source = "our contract"',
      ].join('\n'),
    );
    const r = await cli(['collect', '--config', config], { cwd: elsewhere, env: { USAGE_API_KEY: key } });
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await sb?.close();
    cleanup();
  });

  it('collects into the database the config names, relative to the config file, its price tables overlaid', async () => {
    expect(existsSync(db)).toBe(true);
    expect(existsSync(join(elsewhere, 'data'))).toBe(false);
    // After a collect the price tables follow the configured book, overlay included (the spend views read them).
    const store = await openStore({ path: db, readOnly: true });
    try {
      expect(await rawSql(store).query('SELECT revision FROM price_book')).toEqual([{ revision: OVERLAID }]);
    } finally {
      await store.close();
    }
  });

  it('report and status run from another directory with USAGE_CONFIG, and the overlay prices the report', async () => {
    const r = await cli(['report', '--month', month], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect([0, 2], r.stderr).toContain(r.code);
    const manifest = JSON.parse(readFileSync(join(etc, 'out', month, 'manifest.json'), 'utf8'));
    expect(manifest.price_book.revision).toBe(OVERLAID);
    expect(r.stdout).toContain(`price book ${OVERLAID}`);
    const s = await cli(['status'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(s.code, s.stderr).toBe(0);
    // The whole path in --json; the text may cut a long one (the temporary folder's depth varies by machine).
    const j = await cli(['status', '--json'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(JSON.parse(j.stdout).db).toBe(db);
    expect(s.stdout).toContain(`database ${db.slice(0, 40)}`);
    expect(s.stdout).toMatch(/v2_programs\s+daily/);
    // Fits an 80-column terminal.
    for (const line of s.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  });

  it('a broken overlay is reported once, with its path, and exits 64', async () => {
    const bad = join(etc, 'bad.toml');
    writeFileSync(bad, readFileSync(config, 'utf8').replace('our-prices.toml', 'missing-prices.toml'));
    const r = await cli(['report', '--month', month, '--config', bad], { cwd: elsewhere });
    expect(r.code).toBe(64);
    expect(r.stderr.match(/invalid price book/g)).toHaveLength(1);
    expect(r.stderr.match(/missing-prices\.toml/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/ENOENT: no such file or directory/);
  });

  it('status --check: fresh exits 0; stale data exits 1 saying which scope; a failed last run exits 1 saying so', async () => {
    const fresh = await cli(['status', '--check'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(fresh.code, fresh.stdout).toBe(0);
    expect(fresh.stdout).toMatch(/^OK: \d+ scope\(s\) fresh; last run complete/);
    expect(fresh.stdout.trim().split('\n')).toHaveLength(1);

    // The data ages: every complete collection recorded 30 hours earlier (daily's default limit is 27 h).
    const store = await openStore({ path: db });
    await rawSql(store).run('UPDATE coverage SET collected_at = collected_at - INTERVAL 30 HOUR');
    // No write of the store did that, so its kept summary per scope (migration 021) is recomputed here.
    await rawSql(store).run(
      'DELETE FROM coverage_by_scope; INSERT INTO coverage_by_scope SELECT * FROM coverage_scope_summary(NULL, NULL, NULL)',
    );
    await store.close();
    const stale = await cli(['status', '--check'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(stale.code).toBe(1);
    expect(stale.stdout).toMatch(/^FAIL: v\d_\w+ daily \S+: stale, last complete collection 30h ago \(max 27h\)/);
    const json = await cli(['status', '--check', '--json'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(json.code).toBe(1);
    const j = JSON.parse(json.stdout);
    expect(j.ok).toBe(false);
    expect(j.problems.every((p: string) => /stale/.test(p))).toBe(true);

    // A collection with a key the API refuses: the run fails (and catches nothing up).
    const failed = await cli(['collect'], {
      cwd: elsewhere,
      env: { USAGE_CONFIG: config, USAGE_API_KEY: 'not-a-valid-key' },
    });
    expect(failed.code).toBe(1);
    const after = await cli(['status', '--check'], { cwd: elsewhere, env: { USAGE_CONFIG: config } });
    expect(after.code).toBe(1);
    expect(after.stdout).toMatch(/^FAIL: last run \S+ \(collect\) failed/);
  });
});

describe('usage-pipeline query', () => {
  let sb: Sandbox;
  const { dir, cleanup } = tempDir('usage-query-');
  const db = join(dir, 'usage.duckdb');
  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'bigint', advance: true });
    const r = await cli(['collect', '--db', db, '--granularity', 'daily'], {
      cwd: dir,
      env: { USAGE_API_KEY: sb.apiKey, USAGE_BASE_URL: sb.baseUrl },
    });
    expect([0, 2], r.stderr).toContain(r.code);
  });
  afterAll(async () => {
    await sb?.close();
    cleanup();
  });

  it('prints a table, or JSON with integers beyond 2^53 exact, from the analyst copy', async () => {
    const sql = 'SELECT metric, max(value) AS top FROM usage_program GROUP BY metric ORDER BY top DESC LIMIT 1';
    const store = await openStore({ path: join(dir, 'usage.analyst.duckdb'), readOnly: true });
    const [expected] = await rawSql(store).query<{ metric: string; top: bigint }>(sql);
    await store.close();
    expect(expected!.top > 2n ** 53n).toBe(true);

    const table = await cli(['query', sql, '--db', db], { cwd: dir });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^metric\s+top\n-+\s+-+\n/);
    expect(table.stdout).toContain(`${expected!.metric}  ${expected!.top}`);
    expect(table.stdout).toMatch(/\(1 row\)\n$/);

    const json = await cli(['query', sql, '--db', db, '--json'], { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    expect(json.stdout).toContain(`"top": ${expected!.top}`);
  });

  it('prints a DATE as its day and a TIMESTAMPTZ as its instant, in the table and in JSON', async () => {
    const sql =
      "SELECT DATE '2026-10-01' AS usage_day, CAST(NULL AS DATE) AS none, TIMESTAMPTZ '2026-10-01 06:30:00+00' AS at";
    const table = await cli(['query', sql, '--db', db], { cwd: dir });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split('\n')[2]).toMatch(/^2026-10-01\s+2026-10-01T06:30:00\.000Z$/);
    const json = await cli(['query', sql, '--db', db, '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toEqual([{ usage_day: '2026-10-01', none: null, at: '2026-10-01T06:30:00.000Z' }]);
  });

  it('is read-only, and says what to do without a query or an analyst copy', async () => {
    const write = await cli(['query', 'DELETE FROM coverage', '--db', db], { cwd: dir });
    expect(write.code).toBe(1);
    expect(write.stderr).toMatch(/read-only/i);
    // The usage tables are views over the copy's part files: no statement can change them either.
    const parted = await cli(['query', 'DELETE FROM usage_program_buckets', '--db', db], { cwd: dir });
    expect(parted.code).toBe(1);
    expect(parted.stderr).toMatch(/Can only delete from base table/);
    const none = await cli(['query', '--db', db], { cwd: dir });
    expect(none.code).toBe(64);
    expect(none.stderr).toMatch(/give one query/);
    const missing = await cli(['query', 'SELECT 1', '--db', join(dir, 'nope.duckdb')], { cwd: dir });
    expect(missing.code).toBe(64);
    expect(missing.stderr).toMatch(/no analyst copy at .*nope\.analyst\.duckdb/);
  });

  it('restore refuses while the database is in place, then rebuilds it from the copy (integers beyond 2^53 exact)', async () => {
    const env = { USAGE_API_KEY: sb.apiKey, USAGE_BASE_URL: sb.baseUrl };
    const total = 'SELECT sum(value)::VARCHAR AS total, count(*) AS n FROM usage_program';
    const before = await cli(['query', total, '--db', db, '--json'], { cwd: dir });
    const refused = await cli(['restore', '--db', db], { cwd: dir });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toMatch(/exists: restore writes a new database, so move the damaged file .* aside first/);
    renameSync(db, `${db}.damaged`);
    const restored = await cli(['restore', '--db', db], { cwd: dir });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^restored .*usage\.duckdb from .*usage\.analyst\.duckdb/);
    const store = await openStore({ path: db, readOnly: true });
    try {
      const [r] = await rawSql(store).query<{ total: string; n: bigint }>(total);
      expect(before.stdout).toContain(`"total": "${r!.total}"`);
      expect(BigInt(r!.total)).toBeGreaterThan(2n ** 53n);
    } finally {
      await store.close();
    }
    const again = await cli(['collect', '--db', db, '--granularity', 'daily'], { cwd: dir, env });
    expect([0, 2], again.stderr).toContain(again.code);
  });
});
