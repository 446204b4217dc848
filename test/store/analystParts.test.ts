import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bucketParts, PARTED_TABLE_NAMES } from '../../src/store/analystParts.js';
import { analystPartsDir, publishAnalystCopy, restoreFromAnalystCopy } from '../../src/store/publish.js';
import { rawSql } from '../../src/store/rawSql.js';
import { openStore, type Store } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, tempDir } from '../support/store.js';
import { copyDifferences } from '../support/analyst.js';

let store: Store;
let dir: string;
let cleanup: () => void;

beforeEach(async () => {
  const t = tempDir();
  dir = t.dir;
  cleanup = t.cleanup;
  store = await openStore({ path: join(dir, 'usage.duckdb') });
});
afterEach(async () => {
  await store.close();
  cleanup();
});

const TABLES_SQL = `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1`;

const partFiles = (copy: string, table: string) => {
  const d = join(analystPartsDir(copy), table);
  return existsSync(d)
    ? readdirSync(d, { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.parquet'))
        .sort()
    : [];
};

async function loadDay(day: number, value: bigint, programs = ['p1', 'p2']): Promise<void> {
  await load(
    store,
    spec({ windowStart: at(24 * day), windowEnd: at(24 * day + 24), runId: `run-${day}-${value}` }),
    hourlyRows({ programs, fromHour: 24 * day, toHour: 24 * day + 24, value: () => value }),
  );
}

const memoryLimitSetting = async () =>
  (await rawSql(store).query<{ v: string }>("SELECT current_setting('memory_limit') AS v"))[0]!.v;

describe('bucketParts', () => {
  it('names the UTC days of an hourly window and the UTC months of a daily or monthly one', () => {
    expect(bucketParts('hourly', new Date('2025-01-30T22:00:00Z'), new Date('2025-02-01T01:00:00Z'))).toEqual([
      'hourly/2025-01-30',
      'hourly/2025-01-31',
      'hourly/2025-02-01',
    ]);
    expect(bucketParts('daily', new Date('2024-12-31T00:00:00Z'), new Date('2025-02-01T00:00:00Z'))).toEqual([
      'daily/2024-12',
      'daily/2025-01',
    ]);
    expect(bucketParts('monthly', new Date('2025-01-01T00:00:00Z'), new Date('2025-01-01T00:00:00Z'))).toEqual([]);
  });
});

describe('the analyst copy over part files', () => {
  it('holds what the database holds, and a publish rewrites only the parts runs changed since the last', async () => {
    await loadDay(0, 2n ** 60n);
    await loadDay(1, 5n);
    const copy = await publishAnalystCopy(store);
    expect(await copyDifferences(store, copy, ['usage_program', 'usage_framework', 'spend_daily'])).toEqual({});
    const first = partFiles(copy, 'usage_program_buckets');
    expect(first).toHaveLength(2);

    // Day 1 collected again, with a third program: only its file is new; day 0's is the same file.
    await loadDay(1, 7n, ['p1', 'p2', 'p3']);
    await publishAnalystCopy(store);
    expect(await copyDifferences(store, copy)).toEqual({});
    const second = partFiles(copy, 'usage_program_buckets');
    const [day0] = first.filter((f) => f.startsWith('granularity=hourly/2025-01-01.'));
    expect(second).toContain(day0);
    expect(second).toHaveLength(3); // day 0, the new day 1, and the replaced day 1 kept for its grace period

    // Nothing changed: nothing is written, and the copy still equals the database.
    await publishAnalystCopy(store);
    expect(partFiles(copy, 'usage_program_buckets')).toEqual(second);
    expect(await copyDifferences(store, copy)).toEqual({});
  });

  it("writes row groups of about 30,720 rows, and leaves the store's own DuckDB limit as it was", async () => {
    const programs = Array.from({ length: 2_600 }, (_, i) => `p${i}`); // 62,400 hourly buckets in one day
    const own = store.memoryLimit;
    for (const [i, limit] of ['1GB', '48MB'].entries()) {
      await loadDay(0, BigInt(i + 1), programs); // each publish writes the day again
      await store.setMemoryLimit(limit);
      const setting = await memoryLimitSetting();
      const copy = await publishAnalystCopy(store);
      const file = partFiles(copy, 'usage_program_buckets').at(-1); // the newest generation
      const groups = await rawSql(store).query<{ n: bigint }>(
        'SELECT DISTINCT row_group_id, row_group_num_rows AS n FROM parquet_metadata($f) ORDER BY row_group_id',
        { f: join(analystPartsDir(copy), 'usage_program_buckets', file!) },
      );
      // DuckDB's writer ends a row group at the first whole batch past the size asked for.
      const rows = groups.map((g) => Number(g.n));
      expect(rows.length).toBeGreaterThanOrEqual(2);
      expect(Math.max(...rows)).toBeLessThanOrEqual(30_720 + 2_048);
      expect(rows.reduce((a, b) => a + b)).toBe(62_400);
      expect(await memoryLimitSetting()).toBe(setting);
      expect(store.memoryLimit).toBe(limit);
      await store.setMemoryLimit(own);
    }
  });

  it('removes a replaced file once its grace period is over, and files no record names', async () => {
    await loadDay(0, 1n);
    const copy = await publishAnalystCopy(store);
    writeFileSync(
      join(analystPartsDir(copy), 'usage_program_buckets', 'granularity=hourly', '2025-01-01.dead-1.parquet'),
      'x',
    );
    await loadDay(0, 3n);
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    expect(partFiles(copy, 'usage_program_buckets')).toHaveLength(1);
    expect(await copyDifferences(store, copy)).toEqual({});
  });

  it('a part whose file was lost is written again; a table with new columns is written whole', async () => {
    await loadDay(0, 1n);
    await loadDay(1, 1n);
    const copy = await publishAnalystCopy(store);
    rmSync(join(analystPartsDir(copy), 'usage_program_buckets', partFiles(copy, 'usage_program_buckets')[0]!));
    await rawSql(store).run("UPDATE analyst_tables SET columns = 'other' WHERE table_name = 'alert_priced_days'");
    await publishAnalystCopy(store);
    expect(partFiles(copy, 'usage_program_buckets')).toHaveLength(2);
    expect(await copyDifferences(store, copy)).toEqual({});
  });

  it('prune marks the days it removes, and the copy no longer has them', async () => {
    for (const d of [0, 1, 2]) await loadDay(d, 4n);
    const copy = await publishAnalystCopy(store);
    await store.runs.start({ runId: 'prune-1', command: 'prune', options: {} });
    await store.usage.removeHourlyBefore('prune-1', at(48), await store.usage.hourlyDaysBefore(at(48)));
    await publishAnalystCopy(store);
    expect(await copyDifferences(store, copy)).toEqual({});
    const [r] = await rawSql(store).query<{ days: string }>(
      `SELECT string_agg(part, ',' ORDER BY part) AS days FROM analyst_parts WHERE table_name = 'usage_program_buckets'`,
    );
    expect(r!.days).toBe('hourly/2025-01-03');
  });

  it('seals an hourly month into one part a week and a day after its end, one month a publish', async () => {
    // 2025-01-01, 01-02, 02-01 and 03-10: January and February both ended more than 192 hours before 03-10.
    for (const d of [0, 1, 31, 68]) await loadDay(d, 3n);
    const copy = await publishAnalystCopy(store, { retiredGraceMs: 0 });
    const parts = async () =>
      (
        await rawSql(store).query<{ part: string }>(
          `SELECT part FROM analyst_parts WHERE table_name = 'usage_program_buckets' ORDER BY part`,
        )
      ).map((r) => r.part);
    const files = () => partFiles(copy, 'usage_program_buckets').map((f) => f.replace(/\.[^.]+\.parquet$/, ''));
    // The first publish writes what the runs marked, day by day; each later one seals the oldest month left.
    expect(await parts()).toEqual(['hourly/2025-01-01', 'hourly/2025-01-02', 'hourly/2025-02-01', 'hourly/2025-03-10']);
    await publishAnalystCopy(store, { retiredGraceMs: 0, sealMonth: false }); // as after the hourly job
    expect(await parts()).toHaveLength(4);
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    expect(await parts()).toEqual(['hourly/2025-01', 'hourly/2025-02-01', 'hourly/2025-03-10']);
    expect(await copyDifferences(store, copy, ['usage_program', 'usage_framework'])).toEqual({});
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    const sealed = partFiles(copy, 'usage_program_buckets');
    expect(files()).toEqual([
      'granularity=hourly/2025-01',
      'granularity=hourly/2025-02',
      'granularity=hourly/2025-03-10',
    ]);
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    expect(partFiles(copy, 'usage_program_buckets')).toEqual(sealed);

    // A day of a sealed month written again rewrites its month; a prune that empties the month removes it.
    await loadDay(1, 11n, ['p1', 'p2', 'p3']);
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    const rewritten = partFiles(copy, 'usage_program_buckets');
    expect(rewritten.filter((f) => !sealed.includes(f))).toEqual([
      expect.stringMatching(/^granularity=hourly\/2025-01\./),
    ]);
    expect(await copyDifferences(store, copy)).toEqual({});
    await store.runs.start({ runId: 'prune-2', command: 'prune', options: {} });
    await store.usage.removeHourlyBefore('prune-2', at(24 * 31), await store.usage.hourlyDaysBefore(at(24 * 31)));
    await publishAnalystCopy(store, { retiredGraceMs: 0 });
    expect(await parts()).toEqual(['hourly/2025-02', 'hourly/2025-03-10']);
    expect(await copyDifferences(store, copy)).toEqual({});
  });

  it('every parted table is one the migrations or the finalisation create', async () => {
    const names = (await rawSql(store).query<{ table_name: string }>(TABLES_SQL)).map((r) => r.table_name);
    const dynamic = PARTED_TABLE_NAMES.filter((t) => !names.includes(t));
    expect(dynamic.every((t) => t.startsWith('report_finalized_'))).toBe(true);
  });
});

describe('restore from the analyst copy', () => {
  it('rebuilds the published database, which then takes writes and publishes again', async () => {
    await loadDay(0, 2n ** 60n);
    const copy = await publishAnalystCopy(store);
    await loadDay(1, 9n); // not published: the restore does not have it
    const path = store.path;
    await store.close();
    renameSync(path, `${path}.damaged`);

    await restoreFromAnalystCopy(copy, path);
    store = await openStore({ path });
    const [r] = await rawSql(store).query<{ n: bigint; total: string }>(
      'SELECT count(*) AS n, sum(value)::VARCHAR AS total FROM usage_program',
    );
    expect(r).toEqual({ n: 96n, total: String(96n * 2n ** 60n) });
    expect(await copyDifferences(store, copy)).toEqual({});
    await loadDay(1, 9n);
    await publishAnalystCopy(store);
    expect(await copyDifferences(store, copy)).toEqual({});
    await expect(restoreFromAnalystCopy(copy, path)).rejects.toThrow(/appeared while restoring|exists/);
  });
});
