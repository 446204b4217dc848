import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeSync, existsSync, openSync, readdirSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { analystCopyPath, publishAnalystCopy, restoreFromAnalystCopy } from '../../src/store/publish.js';
import { openStore, StoreCorruptError, type Store } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, tempDir } from '../support/store.js';
import { listMigrations } from '../../src/store/migrations.js';
import { rawSql } from '../../src/store/rawSql.js';

const LATEST = listMigrations().at(-1)!.version;

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

const COUNTS = `SELECT (SELECT count(*) FROM usage_program) AS usage, (SELECT count(*) FROM coverage) AS coverage,
  (SELECT count(*) FROM programs) AS programs, (SELECT max(version) FROM schema_migrations) AS version,
  (SELECT sum(value)::VARCHAR FROM usage_program) AS total`;

async function readerCounts(conn: Awaited<ReturnType<DuckDBInstance['connect']>>): Promise<Record<string, unknown>> {
  const r = await conn.runAndReadAll(COUNTS);
  return r.getRowObjectsJS()[0]!;
}

describe('analyst copy', () => {
  it('derives the copy path from the database path', () => {
    expect(analystCopyPath('data/usage.duckdb')).toBe('data/usage.analyst.duckdb');
    expect(analystCopyPath('/x/y/usage.db')).toBe('/x/y/usage.analyst.duckdb');
    expect(analystCopyPath('/x/y/usage')).toBe('/x/y/usage.analyst.duckdb');
  });

  it('publishes a read-only-openable copy with the same rows while the store stays open, and never disturbs an open reader', async () => {
    await load(
      store,
      spec({ windowStart: at(0), windowEnd: at(24) }),
      hourlyRows({ programs: ['p1', 'p2'], fromHour: 0, toHour: 24, value: () => 2n ** 60n }),
    );
    await store.inventory.upsertPrograms(
      [{ program_id: 'p1', org_id: 'org-1', name: 'a', region_id: null, created_at: null }],
      { seenAt: at(30) },
    );
    const target = await publishAnalystCopy(store);
    expect(target).toBe(join(dir, 'usage.analyst.duckdb'));
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(existsSync(`${target}.wal`)).toBe(false);

    const expected1 = { usage: 96n, coverage: 1n, programs: 1n, version: LATEST, total: String(96n * 2n ** 60n) };
    const reader = await DuckDBInstance.create(target, { access_mode: 'READ_ONLY' });
    const rconn = await reader.connect();
    expect(await readerCounts(rconn)).toEqual(expected1);

    // The store is still open and writable after publishing.
    await load(
      store,
      spec({ windowStart: at(24), windowEnd: at(48) }),
      hourlyRows({ programs: ['p1'], fromHour: 24, toHour: 48, value: () => 1n }),
    );
    await publishAnalystCopy(store);

    // The open session keeps the copy it opened; a new session sees the new one.
    expect(await readerCounts(rconn)).toEqual(expected1);
    // Columns this session had not read yet come from the old file too.
    const cols = (
      await rconn.runAndReadAll(
        "SELECT max(timeframe_end) AS te, string_agg(DISTINCT metric, ',' ORDER BY metric) AS ms FROM usage_program",
      )
    ).getRowObjectsJS();
    expect(cols).toEqual([{ te: at(24), ms: 'compute_unit_seconds,public_network_transfer_bytes' }]);
    const fresh = await openStore({ path: target, readOnly: true });
    expect(await rawSql(fresh).query(COUNTS)).toEqual([
      { usage: 144n, coverage: 2n, programs: 1n, version: LATEST, total: String(96n * 2n ** 60n + 48n) },
    ]);
    await fresh.close();
    rconn.closeSync();
    reader.closeSync();
  });

  it('refuses to publish over the database itself', async () => {
    await expect(publishAnalystCopy(store, { target: store.path })).rejects.toThrow(
      /cannot replace the database itself/,
    );
  });
});

describe('a damaged database', () => {
  it('is refused with a message that names the analyst copy, and following it gives back the published state', async () => {
    await load(
      store,
      spec({ windowStart: at(0), windowEnd: at(24) }),
      hourlyRows({ programs: ['p1', 'p2'], fromHour: 0, toHour: 24, value: () => 2n ** 60n }),
    );
    const copy = await publishAnalystCopy(store);
    const path = store.path;
    await store.close();
    // A bad block, as a write torn by a crash leaves it: the file's first data block overwritten.
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xab), 0, 4096, 12288);
    closeSync(fd);

    const refused = await openStore({ path }).then(
      () => null,
      (err: Error) => err,
    );
    expect(refused).toBeInstanceOf(StoreCorruptError);
    expect(refused!.message).toContain(
      `run \`usage-pipeline restore\`: it rebuilds the database from the analyst copy ${copy}`,
    );
    expect(refused!.message).toContain('It was not changed');

    // What the message says: move the file aside, rebuild it from the analyst copy (what `restore` runs).
    renameSync(path, `${path}.damaged`);
    await restoreFromAnalystCopy(copy, path);
    store = await openStore({ path });
    expect(await rawSql(store).query(COUNTS)).toEqual([
      { usage: 96n, coverage: 1n, programs: 0n, version: LATEST, total: String(96n * 2n ** 60n) },
    ]);
  });

  it('without an analyst copy, the message says to restore a backup or collect into a new file', () => {
    const err = new StoreCorruptError(join(dir, 'other.duckdb'), 'IO Error: Corrupt database file');
    expect(err.message).toContain('restore it from a backup, or run `usage-pipeline collect` into a new file');
    expect(err.message).not.toContain('analyst copy');
  });
});
