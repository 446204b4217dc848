// `usage-pipeline compact`: a database file in DuckDB's older storage format rewritten in the store's, every
// table, view and macro kept; a kill during the rewrite leaves the database as it was; a new database is
// created in the store's format while its analyst copy stays in the one analysts' DuckDB reads.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';
import { cli, errorMessage, startCli } from '../support/cli.js';
import { tempDir } from '../support/store.js';

/** The storage format DuckDB reports for a file, opened read-only in an instance of its own. */
async function formatOf(path: string): Promise<string> {
  const db = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  try {
    const r = await c.runAndReadAll(
      "SELECT map_extract_value(tags, 'storage_version') AS v FROM duckdb_databases() WHERE database_name = current_database()",
    );
    return String(r.getRowObjects()[0]?.v);
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** Every table's row count and an order-free digest of its rows, and the names of the views and macros. */
async function contents(path: string): Promise<Record<string, string>> {
  const store = await openStore({ path, readOnly: true });
  const sql = rawSql(store);
  try {
    const out: Record<string, string> = {};
    const tables = await sql.query<{ name: string }>(
      'SELECT table_name AS name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1',
    );
    for (const { name } of tables) {
      const [r] = await sql.query<{ n: bigint; h: bigint | null }>(
        `SELECT count(*) AS n, sum(hash(t)::HUGEINT) AS h FROM "${name}" t`,
      );
      out[name] = `${r?.n} ${r?.h}`;
    }
    const others = await sql.query<{ names: string }>(
      `SELECT string_agg(name, ',' ORDER BY name) AS names FROM (
         SELECT view_name AS name FROM duckdb_views() WHERE database_name = current_database() AND NOT internal
         UNION ALL SELECT DISTINCT function_name FROM duckdb_functions() WHERE database_name = current_database() AND NOT internal)`,
    );
    out['(views and macros)'] = others[0]?.names ?? '';
    return out;
  } finally {
    await store.close();
  }
}

describe('compact', () => {
  let sb: Sandbox;
  const { dir, cleanup } = tempDir('usage-compact-');
  const config = join(dir, 'usage.toml');
  const db = join(dir, 'data', 'usage.duckdb');
  const env = () => ({ USAGE_API_KEY: sb.apiKey });
  const run = (args: string[]) => cli([...args, '--config', config], { cwd: dir, env: env(), guardMs: 120_000 });

  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', advance: true });
    writeFileSync(
      config,
      `[api]\nbase_url = ${JSON.stringify(sb.baseUrl)}\n[collect]\ngranularities = ["daily"]\n[store]\ndb = "data/usage.duckdb"\n`,
    );
    // A database file as an earlier release created it: DuckDB's default storage format.
    mkdirSync(join(dir, 'data'), { recursive: true });
    const old = await DuckDBInstance.create(db, { storage_compatibility_version: 'v1.0.0' });
    (await old.connect()).closeSync();
    old.closeSync();
    const r = await run(['collect']);
    expect(r.code, r.stderr).toBe(0);
  });
  afterAll(async () => {
    await sb?.close();
    cleanup();
  });

  it('refuses when there is no database, creating nothing', async () => {
    const other = join(dir, 'none', 'usage.duckdb');
    const r = await cli(['compact', '--db', other, '--config', config], { cwd: dir, env: env() });
    expect(r.code).not.toBe(0);
    expect(errorMessage(r.stderr)).toMatch(/no database at .*none.*nothing to compact/);
    expect(existsSync(join(dir, 'none'))).toBe(false);
  });

  it('says in status that an older file can be rewritten, and rewrites it with every row kept', async () => {
    expect(await formatOf(db)).toBe('v1.0.0+');
    const status = await run(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout).storage).toEqual({ format: 'v1.0.0+', current: false });
    expect((await run(['status'])).stdout).toMatch(/storage format v1\.0\.0\+: `usage-pipeline compact` rewrites it/);
    const before = await contents(db);
    expect(Number(before.usage_program_buckets?.split(' ')[0])).toBeGreaterThan(0);

    // Killed while it writes the new file: the database is as it was, and the next compact clears what was left.
    const killed = startCli(['compact', '--config', config], { cwd: dir, env: env() });
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (readdirSync(join(dir, 'data')).some((f) => f.includes('.compact-'))) {
          clearInterval(poll);
          killed.proc.kill('SIGKILL');
          resolve();
        }
      }, 5);
    });
    await killed.done;
    expect(await contents(db)).toEqual(before);
    expect(await formatOf(db)).toBe('v1.0.0+');

    const r = await run(['compact', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ formatBefore: 'v1.0.0+', formatAfter: 'v1.5.0+' });
    expect(await formatOf(db)).toBe('v1.5.0+');
    expect(await contents(db)).toEqual(before);
    expect(readdirSync(join(dir, 'data')).filter((f) => f.includes('.compact-'))).toEqual([]);

    // The rewritten file works as the database: a collect runs on it, and status no longer suggests compact.
    expect((await run(['collect'])).code).toBe(0);
    const after = await run(['status', '--json']);
    expect(JSON.parse(after.stdout).storage).toEqual({ format: 'v1.5.0+', current: true });
    expect((await run(['status'])).stdout).not.toMatch(/usage-pipeline compact/);
  });

  it("creates a new database in the store's format and its analyst copy in the one DuckDB 1.0 reads", async () => {
    const fresh = join(dir, 'fresh', 'usage.duckdb');
    const r = await cli(['collect', '--db', fresh, '--config', config], { cwd: dir, env: env(), guardMs: 120_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(await formatOf(fresh)).toBe('v1.5.0+');
    expect(await formatOf(join(dir, 'fresh', 'usage.analyst.duckdb'))).toBe('v1.0.0+');
  });
});
