import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { executionAsyncResource } from 'node:async_hooks';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { IN_MEMORY, openStore, type Store } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, tempDir } from '../support/store.js';
import { memoryBytes } from '../../src/store/facade.js';
import { listMigrations } from '../../src/store/migrations.js';
import { appendRows } from '../support/rowLoader.js';
import { rawSql } from '../../src/store/rawSql.js';

const LATEST = listMigrations().at(-1)!.version;

let store: Store;
let dir: string;
let cleanup: () => void;
let clock = new Date('2025-02-01T10:00:00Z');

beforeEach(async () => {
  const t = tempDir();
  dir = t.dir;
  cleanup = t.cleanup;
  clock = new Date('2025-02-01T10:00:00Z');
  store = await openStore({ path: join(dir, 'nested', 'usage.duckdb'), now: () => clock });
});

afterEach(async () => {
  await store.close();
  cleanup();
});

describe('query and run', () => {
  it('returns bigint, Date (UTC), exact decimal strings, and binds Date, bigint, arrays and named parameters', async () => {
    const [row] = await rawSql(store).query(
      `SELECT 9223372036854775807::BIGINT AS big, TIMESTAMPTZ '2025-03-01 12:00:00+02' AS ts, 0.1::DECIMAL(18,2) + 0.2 AS dec,
              1234567890123456.78::DECIMAL(38,2) AS dec2, 42 AS int, 'x' AS s, NULL AS nothing, current_setting('TimeZone') AS tz,
              $d::VARCHAR AS d_text, $b + 1 AS b1, list_sum($l) AS l_sum, $n::INTEGER AS n`,
      { d: new Date('2025-01-02T03:04:05Z'), b: 2n ** 62n, l: [1n, 2n, 3n], n: null },
    );
    expect(row).toEqual({
      big: 2n ** 63n - 1n,
      ts: new Date('2025-03-01T10:00:00Z'),
      dec: '0.30',
      dec2: '1234567890123456.78',
      int: 42,
      s: 'x',
      nothing: null,
      tz: 'UTC',
      d_text: '2025-01-02 03:04:05+00',
      b1: 2n ** 62n + 1n,
      l_sum: 6n,
      n: null,
    });
    expect(await rawSql(store).query('SELECT $a::VARCHAR AS a, $b AS b', { a: 'p', b: true })).toEqual([
      { a: 'p', b: true },
    ]);
  });

  it('transaction commits, or rolls back everything when fn throws; nested calls join', async () => {
    await rawSql(store).run('CREATE TABLE t (v BIGINT)');
    await store.transaction(async () => {
      await rawSql(store).run('INSERT INTO t VALUES ($v)', { v: 1n });
      await store.transaction(() => rawSql(store).run('INSERT INTO t VALUES ($v)', { v: 2n }));
    });
    await expect(
      store.transaction(async () => {
        await rawSql(store).run('INSERT INTO t VALUES ($v)', { v: 3n });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await rawSql(store).query('SELECT list(v ORDER BY v) AS vs FROM t')).toEqual([{ vs: [1n, 2n] }]);
  });

  it('serialises concurrent callers around a transaction', async () => {
    await rawSql(store).run('CREATE TABLE t (v INTEGER)');
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = store.transaction(async () => {
      await rawSql(store).run('INSERT INTO t VALUES (1)');
      await gate;
      await rawSql(store).run('INSERT INTO t VALUES (2)');
    });
    const outside = rawSql(store).query<{ n: bigint }>('SELECT count(*) AS n FROM t');
    release();
    await tx;
    // The outside read waited for the transaction, so it sees both rows, never one.
    expect(await outside).toEqual([{ n: 2n }]);
  });
});

describe('collection runs', () => {
  it('records start and finish, newest first, with counts as numbers', async () => {
    await store.runs.start({
      runId: 'r1',
      command: 'collect',
      options: { orgs: ['o1'], apiKey: 'secret!', big: 2n ** 60n },
    });
    clock = new Date('2025-02-01T11:00:00Z');
    await store.runs.finish({
      runId: 'r1',
      status: 'partial',
      requests: 120,
      retries: 3,
      throttled: 1,
      pages: 110,
      rowsLoaded: 5000,
      error: 'v1: not eligible',
    });
    clock = new Date('2025-02-01T12:00:00Z');
    await store.runs.start({ runId: 'r2', command: 'inventory', options: {} });
    const runs = await store.runs.last(5);
    expect(runs.map((r) => [r.runId, r.status])).toEqual([
      ['r2', 'running'],
      ['r1', 'partial'],
    ]);
    expect(runs[1]).toEqual({
      runId: 'r1',
      command: 'collect',
      startedAt: new Date('2025-02-01T10:00:00Z'),
      finishedAt: new Date('2025-02-01T11:00:00Z'),
      status: 'partial',
      requests: 120,
      retries: 3,
      throttled: 1,
      pages: 110,
      rowsLoaded: 5000,
      error: 'v1: not eligible',
      inventoryRequests: 0,
      options: JSON.stringify({ orgs: ['o1'], apiKey: '[redacted]', big: String(2n ** 60n) }),
    });
    expect(await store.runs.last(1)).toHaveLength(1);
    await expect(
      store.runs.finish({
        runId: 'nope',
        status: 'failed',
        requests: 0,
        retries: 0,
        throttled: 0,
        pages: 0,
        rowsLoaded: 0,
      }),
    ).rejects.toThrow(/runs\.start was not called/);
  });
});

describe('coverage', () => {
  it('summarises per source, granularity and scope, and answers the latest complete end', async () => {
    const ts = (h: number) => new Date(at(0).getTime() + 1000 * 3_600_000 + h * 60_000);
    await load(
      store,
      spec({ windowStart: at(0), windowEnd: at(24), collectedAt: ts(1) }),
      hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24 }),
    );
    await load(
      store,
      spec({ windowStart: at(24), windowEnd: at(48), collectedAt: ts(2) }),
      hourlyRows({ programs: ['p1'], fromHour: 24, toHour: 48 }),
    );
    await load(
      store,
      spec({
        windowStart: at(48),
        windowEnd: at(50),
        collectedAt: ts(3),
        coverage: { source: 'v2_programs', scope: 'org-1', status: 'partial' },
      }),
      hourlyRows({ programs: ['p1'], fromHour: 48, toHour: 50 }),
    );
    await store.coverage.record({
      source: 'v1_programs',
      granularity: 'daily',
      scope: 'all',
      windowStart: at(0),
      windowEnd: at(48),
      status: 'not_eligible',
      runId: 'run-1',
      collectedAt: ts(4),
      detail: '403 plan',
    });
    await store.coverage.record({
      source: 'v2_programs',
      granularity: 'hourly',
      scope: 'org-2',
      windowStart: at(0),
      windowEnd: at(24),
      status: 'complete',
      runId: 'run-1',
      collectedAt: ts(1),
    });
    await store.coverage.record({
      source: 'v2_programs',
      granularity: 'hourly',
      scope: 'org-2',
      windowStart: at(24),
      windowEnd: at(48),
      status: 'failed',
      runId: 'run-2',
      collectedAt: ts(5),
      detail: 'HTTP 503 x5',
    });

    const summary = await store.coverage.summary();
    expect(summary.map((s) => [s.source, s.granularity, s.scope, s.lastStatus])).toEqual([
      ['v1_programs', 'daily', 'all', 'not_eligible'],
      ['v2_programs', 'hourly', 'org-1', 'partial'],
      ['v2_programs', 'hourly', 'org-2', 'failed'],
    ]);
    expect(summary[1]).toMatchObject({
      firstCompleteStart: at(0),
      lastCompleteEnd: at(48),
      lastDataEnd: at(50),
      completeWindows: 2,
      lastCollectedAt: ts(3),
    });
    expect(summary[2]).toMatchObject({ lastCompleteEnd: at(24), lastDetail: 'HTTP 503 x5', lastRunId: 'run-2' });
    expect(summary[0]).toMatchObject({ lastCompleteEnd: null, lastDetail: '403 plan' });

    expect(await store.coverage.latestCompleteEnd('v2_programs', 'hourly', 'org-1')).toEqual(at(48));
    expect(await store.coverage.latestCompleteEnd('v2_programs', 'hourly', 'org-2')).toEqual(at(24));
    expect(await store.coverage.latestCompleteEnd('v2_programs', 'hourly')).toEqual(at(48));
    expect(await store.coverage.latestCompleteEnd('v2_programs', 'daily')).toBeNull();
    expect(await store.coverage.latestCompleteEnd('v1_programs', 'daily', 'all')).toBeNull();

    // Re-recording the same window replaces its row rather than adding one.
    await store.coverage.record({
      source: 'v2_programs',
      granularity: 'hourly',
      scope: 'org-2',
      windowStart: at(24),
      windowEnd: at(48),
      status: 'complete',
      runId: 'run-3',
      collectedAt: ts(6),
    });
    expect(await rawSql(store).query("SELECT count(*) AS n FROM coverage WHERE scope = 'org-2'")).toEqual([{ n: 2n }]);
    expect(await store.coverage.latestCompleteEnd('v2_programs', 'hourly', 'org-2')).toEqual(at(48));

    const usage = await store.usage.summary();
    expect(usage).toEqual([
      {
        table: 'usage_program',
        apiVersion: 'v2',
        granularity: 'hourly',
        rows: 100,
        firstStart: at(0),
        lastEnd: at(50),
        lastCollectedAt: ts(3),
      },
    ]);
    // status counts stored rows (one per bucket) without reading a column: the 100 values are 50 buckets of 2 metrics.
    expect(await store.usage.rowCounts()).toEqual({ usage_program: 50, usage_framework: 0 });
  });
});

describe('lifecycle', () => {
  it('creates the parent directory, refuses use after close, and close is idempotent', async () => {
    expect(store.path).toBe(join(dir, 'nested', 'usage.duckdb'));
    await store.close();
    await store.close();
    await expect(rawSql(store).query('SELECT 1')).rejects.toThrow(/closed/);
    store = await openStore({ path: join(dir, 'nested', 'usage.duckdb') });
    expect(await store.schemaVersion()).toBe(LATEST);
  });

  it('close aborts a staged batch: nothing of it reaches the file', async () => {
    const b = store.usage.beginBatch(spec({ windowStart: at(0), windowEnd: at(24) }));
    await appendRows(b, hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24 }));
    await store.close();
    await expect(b.commit()).rejects.toThrow(/closed/);
    store = await openStore({ path: join(dir, 'nested', 'usage.duckdb') });
    expect(
      await rawSql(store).query('SELECT (SELECT count(*) FROM usage_program) + (SELECT count(*) FROM coverage) AS n'),
    ).toEqual([{ n: 0n }]);
  });

  it('a closed store leaves nothing on the async resources created after it (a daemon opens one per run)', async () => {
    // Node gives every new async resource a slot per AsyncLocalStorage it still lists: a store's section must leave the list at close.
    const slotsOfNewResource = () =>
      new Promise<number>((resolve) =>
        setTimeout(() => resolve(Object.getOwnPropertySymbols(executionAsyncResource()).length), 0),
      );
    await rawSql(store).query('SELECT 1');
    const before = await slotsOfNewResource();
    for (let i = 0; i < 3; i++) {
      const other = await openStore({ path: IN_MEMORY });
      await store.transaction(() => other.transaction(() => rawSql(other).query('SELECT 1')));
      await other.close();
    }
    expect(await slotsOfNewResource()).toBe(before);
  });

  it("checkpointThreshold: a commit that takes the log past DuckDB's default 16MB leaves it to the checkpoint", async () => {
    // The collect's scopes commit with a larger threshold so that its own checkpoint is the run's only one
    // (COLLECT_CHECKPOINT_THRESHOLD, src/app/collect.ts): at DuckDB's default a commit checkpointed too.
    const wal = (p: string) => (existsSync(`${p}.wal`) ? statSync(`${p}.wal`).size : 0);
    // About 22 MB of log (the rows of an insert smaller than a row group are logged as they are), then a small
    // commit: DuckDB checks the log's size before a commit writes to it.
    const fill = [
      'CREATE TABLE big (s VARCHAR)',
      'INSERT INTO big SELECT repeat(CAST(i AS VARCHAR), 250) FROM range(20000) r(i)',
      "INSERT INTO big VALUES ('one more')",
    ];
    const logged = async (o: { checkpointThreshold?: string }, name: string) => {
      const path = join(dir, name);
      const s = await openStore({ path, ...o });
      try {
        for (const sql of fill) await rawSql(s).run(sql);
        return wal(path);
      } finally {
        await s.close();
      }
    };
    expect(await logged({}, 'default.duckdb')).toBe(0);
    expect(await logged({ checkpointThreshold: '64MB' }, 'raised.duckdb')).toBeGreaterThan(16_000_000);
  });

  it('a read-only open of a missing file says to collect first', async () => {
    await expect(openStore({ path: join(dir, 'missing.duckdb'), readOnly: true })).rejects.toThrow(
      /does not exist yet.*collect/,
    );
  });
});

describe("openStore(':memory:')", () => {
  it('keeps the database in memory: no file appears, and two in-memory stores are independent', async () => {
    const { dir, cleanup } = tempDir();
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const a = await openStore({ path: ':memory:' });
      const b = await openStore({ path: ':memory:' });
      try {
        await rawSql(a).run('CREATE TABLE only_in_a (x INTEGER)');
        const inA = await rawSql(a).query<{ n: bigint }>(
          "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'only_in_a'",
        );
        const inB = await rawSql(b).query<{ n: bigint }>(
          "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'only_in_a'",
        );
        expect(inA[0]?.n).toBe(1n);
        expect(inB[0]?.n).toBe(0n);
      } finally {
        await a.close();
        await b.close();
      }
      const { readdirSync } = await import('node:fs');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
      cleanup();
    }
  });
});

describe('memoryBytes', () => {
  it('reads a memory_limit as the configuration writes it, and refuses anything else', () => {
    expect(memoryBytes('64MB')).toBe(64e6);
    expect(memoryBytes('1.5 GiB')).toBe(1.5 * 2 ** 30);
    expect(memoryBytes('512kb')).toBe(512e3);
    expect(memoryBytes('64MB') < memoryBytes('128MB')).toBe(true);
    expect(() => memoryBytes('64 apples')).toThrow(/not a memory size: 64 apples/);
  });
});
