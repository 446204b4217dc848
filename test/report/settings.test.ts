// A report changes DuckDB's settings while it runs (memory limit, threads, insertion order, the
// allocator's flushing, the cache of external files: ARCHITECTURE.md, "Reports", "Memory") and gives
// every one back afterwards, whatever the store was opened with: the daemon's store serves other work.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { runReport } from '../../src/report/run.js';
import { rawSql } from '../../src/store/rawSql.js';
import type { Store } from '../../src/store/store.js';
import { load, spec, useTempStore } from '../support/store.js';

const out = mkdtempSync(join(tmpdir(), 'report-settings-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

async function loadOneHour(store: Store): Promise<void> {
  const start = new Date('2025-10-05T00:00:00Z');
  await load(
    store,
    spec({ windowStart: new Date('2025-10-01T00:00:00Z'), windowEnd: new Date('2025-11-01T00:00:00Z') }),
    [
      {
        org_id: 'org-1',
        program_id: 'program-1',
        period_id: 'period-1',
        period_plan: 'scale',
        period_start: new Date('2025-09-01T00:00:00Z'),
        period_end: null,
        timeframe_start: start,
        timeframe_end: new Date(start.getTime() + 3_600_000),
        metric: 'compute_unit_seconds',
        value: 3_600n,
      },
    ],
  );
}

/** DuckDB's own reading of its memory limit, to the byte as it displays it. */
async function limitNow(store: Store): Promise<string> {
  const [r] = await rawSql(store).query<{ limit: string }>('SELECT current_setting(\'memory_limit\') AS "limit"');
  return r!.limit;
}

describe('the settings a report changes', () => {
  const store = useTempStore();

  test.each([true, false])('are given back after the report (the external file cache was %s)', async (fileCache) => {
    await loadOneHour(store());
    await rawSql(store()).run(`SET enable_external_file_cache = ${fileCache}`);
    await rawSql(store()).run('SET threads = 3');
    const before = await store().report.settings.reportSettings();
    const limitBefore = await limitNow(store());
    expect(before.file_cache).toBe(fileCache);
    const r = await runReport({
      store: store(),
      month: '2025-10',
      outDir: join(out, String(fileCache)),
      formats: ['parquet'],
      priceBookPath: 'config/prices.toml',
      now: new Date('2025-11-02T00:00:00Z'),
      memoryLimit: '128MB',
    });
    expect(r.total).not.toBe('0.00');
    expect(await store().report.settings.reportSettings()).toEqual(before);
    expect(await limitNow(store())).toBe(limitBefore);
  });
});

describe('dropping the cached blocks of the tables after the stages', () => {
  const store = useTempStore();

  /** What DuckDB holds of the database's tables (the BASE_TABLE tag), in bytes. */
  async function tableBlocks(s: Store): Promise<number> {
    return Number((await s.report.settings.duckdbMemoryByTag()).find((t) => t.tag === 'BASE_TABLE')?.bytes ?? 0n);
  }

  test("frees what reading a table left cached, and the limit is the store's again", async () => {
    const sql = rawSql(store());
    await store().setMemoryLimit('256MB');
    // About 48 MB of incompressible BIGINTs, written to the file, then read whole.
    await sql.run(
      'CREATE TABLE big AS SELECT hash(i) AS a, hash(i + 1) AS b, hash(i + 2) AS c FROM range(2000000) t(i)',
    );
    await sql.run('CHECKPOINT');
    await sql.query('SELECT sum(a % 7), sum(b % 7), sum(c % 7) FROM big');
    const limitBefore = await limitNow(store());
    const cached = await tableBlocks(store());
    expect(cached).toBeGreaterThan(32 * 2 ** 20);

    expect(await store().report.settings.dropCachedBlocks('8MB')).toBe(true);
    expect(await tableBlocks(store())).toBeLessThan(8 * 2 ** 20);
    expect(store().memoryLimit).toBe('256MB');
    expect(await limitNow(store())).toBe(limitBefore);
    // The table is whole: its blocks are read back from the file.
    const [r] = await sql.query<{ n: bigint }>('SELECT count(*) AS n FROM big');
    expect(r!.n).toBe(2_000_000n);
  });
});
