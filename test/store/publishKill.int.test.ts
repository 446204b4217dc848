// The analyst copy while the collector writes and publishes: every session opened on it sees one
// published state whole, and a kill at any moment leaves a copy that reads and equals a published state.
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { DuckDBInstance } from '@duckdb/node-api';
import { packageRoot } from '../../src/store/sql.js';
import { analystCopyPath, publishAnalystCopy } from '../../src/store/publish.js';
import { openStore } from '../../src/store/store.js';
import { PARTED_TABLE_NAMES } from '../../src/store/analystParts.js';
import { useTempDbPath } from '../support/store.js';
import { copyDifferences } from '../support/analyst.js';

const dbPath = useTempDbPath();
const VALUES_PER_DAY = 30n * 24n * 2n; // publish-child.mjs: programs x hours x metrics

/** The total of usage_program after publish i: each of days 0..2 holds the last value written to it. */
function totalAfter(i: number): bigint {
  let total = 0n;
  for (let day = 0; day < 3; day++) {
    const last = [...Array(i + 1).keys()].filter((k) => k >= 1 && k % 3 === day).at(-1);
    if (last !== undefined) total += BigInt(last) * VALUES_PER_DAY;
  }
  return total;
}

/** Runs the child for publishes first..last; kills it `killAfterMs` after start (never, if undefined). */
function runChild(
  first: number,
  last: number,
  graceMs: number,
  killAfterMs?: number,
  onPublished?: (i: number) => void,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['test/store/fixtures/publish-child.mjs', dbPath(), String(first), String(last), String(graceMs)],
      { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let published = first - 1;
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      for (const m of d.toString().matchAll(/published (\d+)/g)) {
        published = Number(m[1]);
        onPublished?.(published);
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === 'SIGKILL' || code === 0) resolve(published);
      else reject(new Error(`child failed (${code}): ${err}`));
    });
  });
}

/** A new read-only session on the copy: its usage total, and every parted table read through. */
async function readCopy(): Promise<bigint> {
  const db = await DuckDBInstance.create(analystCopyPath(dbPath()), { access_mode: 'READ_ONLY' });
  const conn = await db.connect();
  try {
    const tables = (
      await conn.runAndReadAll(`SELECT table_name AS t FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views()`)
    )
      .getRowObjectsJS()
      .map((r) => String(r.t));
    for (const t of PARTED_TABLE_NAMES.filter((n) => tables.includes(n)))
      await conn.runAndReadAll(`SELECT count(*) FROM "${t}"`);
    const r = await conn.runAndReadAll('SELECT coalesce(sum(value), 0)::BIGINT AS total FROM usage_program');
    return r.getRowObjectsJS()[0]!.total as bigint;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

describe('the analyst copy under a writing collector', () => {
  it('every session opened while runs publish sees one published state whole', async () => {
    await runChild(1, 3, 3_600_000);
    const seen: bigint[] = [];
    let reading = true;
    const reader = (async () => {
      while (reading) seen.push(await readCopy());
    })();
    await runChild(4, 12, 3_600_000);
    reading = false;
    await reader;
    const allowed = new Set([...Array(13).keys()].filter((i) => i >= 3).map(totalAfter));
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.filter((t) => !allowed.has(t))).toEqual([]);
  });

  it('killed at any moment, it leaves a copy equal to the last or the next published state; the next publish catches up', async () => {
    let published = await runChild(1, 2, 0);
    // Kill moments spread over a cycle (a commit, a publish: a few hundred ms), seeded.
    let seed = 12345;
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed / 2 ** 31);
    for (let k = 0; k < 8; k++) {
      const next = await runChild(published + 1, published + 50, 0, 200 + Math.floor(rand() * 900));
      const total = await readCopy();
      expect([totalAfter(next), totalAfter(next + 1)]).toContain(total);
      published = next;
    }
    const store = await openStore({ path: dbPath() });
    try {
      const copy = await publishAnalystCopy(store, { retiredGraceMs: 0 });
      expect(await copyDifferences(store, copy)).toEqual({});
    } finally {
      await store.close();
    }
  });
});
