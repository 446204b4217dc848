// A collect under a deliberately tiny DuckDB memory_limit fails cleanly: exit 1 naming the limit, and
// the database opens afterwards holding exactly what it held before.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { cli, usageTablesDigest } from '../support/cli.js';
import { HOSTILE_KEY, HOSTILE_ORG, startHostileServer, type HostileServer } from '../support/hostile-server.js';
import { rawSql } from '../../src/store/rawSql.js';

const DAY = 86_400_000;
const ENV = { USAGE_API_KEY: HOSTILE_KEY };
const config = (memory: string) => `
[store]
lock_timeout_seconds = 5

[collect]
memory_limit = "${memory}"
`;

/** The usage the database holds, without which run wrote it and when. */
async function content(db: string): Promise<string[]> {
  const store = await openStore({ path: db, readOnly: true });
  try {
    const rows = await rawSql(store).query<{ line: string }>(
      `SELECT concat_ws('|', api_version, granularity, org_id, program_id, period_id, period_plan, period_start, period_end,
                        timeframe_start, timeframe_end, metric, value) AS line FROM usage_program ORDER BY line`,
    );
    return rows.map((r) => r.line);
  } finally {
    await store.close();
  }
}

describe('collect under a tiny memory_limit', () => {
  let api: HostileServer;
  const dir = mkdtempSync(join(tmpdir(), 'usage-memory-'));
  const db = join(dir, 'usage.duckdb');
  const today = Math.floor(Date.now() / DAY) * DAY;
  const from = new Date(today - 10 * DAY).toISOString().slice(0, 10);
  const to = new Date(today - 5 * DAY).toISOString().slice(0, 10);
  const args = (cfg: string) => [
    'collect',
    '--config',
    cfg,
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
  ];

  beforeAll(async () => {
    api = await startHostileServer();
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails cleanly when DuckDB runs out of memory: exit 1 naming the limit, the database as it was and reopenable', async () => {
    const normal = join(dir, 'normal.toml');
    writeFileSync(normal, config('128MB'));
    const first = await cli(args(normal), { env: ENV });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const before = await usageTablesDigest(db);
    const beforeContent = await content(db);
    expect(before.rows).toBeGreaterThan(0);

    // Two tiny limits: one that DuckDB cannot even open the file with, one that lets it open but not
    // stage and commit a scope. Either way the collect stops, never goes on or half-writes.
    for (const limit of ['1MB', '8MB']) {
      const tiny = join(dir, `tiny-${limit}.toml`);
      writeFileSync(tiny, config(limit));
      const r = await cli(args(tiny), { env: ENV });
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toContain(`ran out of memory`);
      expect(r.stderr).toContain(`collect.memory_limit = ${limit}`);
      expect(await usageTablesDigest(db)).toEqual(before);
      expect(await content(db)).toEqual(beforeContent);
    }

    // And the file still opens for writing and takes a normal collect, with the same usage.
    const again = await cli(args(normal), { env: ENV });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(await content(db)).toEqual(beforeContent);
  });
});
