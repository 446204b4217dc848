import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { acquireRunLock, lockPaths, readLockHolder, RunLockBusyError, withRunLock } from '../../src/app/lock.js';
import { distModule } from '../support/child.js';
import { until } from '../support/fixture.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'usage-lock-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('run lock', () => {
  it('never lets two acquirers hold it at once, and each waits its turn', async () => {
    const db = join(dir, 'turns.duckdb');
    let holding = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map((i) =>
        withRunLock(db, { waitMs: 10_000, command: `worker ${i}` }, async () => {
          holding++;
          most = Math.max(most, holding);
          expect(readLockHolder(db)?.command).toBe(`worker ${i}`);
          await sleep(120);
          order.push(i);
          holding--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort()).toEqual([0, 1, 2, 3]);
    expect(existsSync(lockPaths(db).lock)).toBe(false);
    expect(existsSync(lockPaths(db).note)).toBe(false);
  });

  it('refuses after the wait with a message naming the holder, and works before the database exists', async () => {
    const db = join(dir, 'sub', 'busy.duckdb');
    const held = await acquireRunLock(db, { waitMs: 0, command: 'schedule hourly' });
    try {
      const started = Date.now();
      const err = await acquireRunLock(db, { waitMs: 400, command: 'collect', cwd: dir }).catch((e: unknown) => e);
      expect(Date.now() - started).toBeGreaterThanOrEqual(380);
      expect(err).toBeInstanceOf(RunLockBusyError);
      const e = err as RunLockBusyError;
      expect(e.holder?.pid).toBe(process.pid);
      expect(e.message).toBe(
        `another collection (pid ${process.pid}, \`schedule hourly\`, since ${held.holder.started_at}) holds the lock on ` +
          `${join('sub', 'busy.duckdb')}; it will be released when that run ends — try again later`,
      );
    } finally {
      await held.release();
    }
    // Released: the next one gets it at once.
    const again = await acquireRunLock(db, { waitMs: 0, command: 'collect' });
    await again.release();
  });

  it('a waiting acquirer gets the lock as soon as the holder releases it', async () => {
    const db = join(dir, 'wait.duckdb');
    const held = await acquireRunLock(db, { waitMs: 0, command: 'schedule daily' });
    setTimeout(() => void held.release(), 500);
    const started = Date.now();
    const lock = await acquireRunLock(db, { waitMs: 10_000, command: 'collect' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(readLockHolder(db)?.command).toBe('collect');
    await lock.release();
  });

  it('takes over at once a lock left by a killed process of this host', async () => {
    const db = join(dir, 'stale.duckdb');
    const staleMs = 2_000;
    const child = spawn(
      process.execPath,
      [join(FIXTURES, 'hold-lock.mjs'), distModule('src/app/lock.ts'), db, String(staleMs)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until(() => out.includes('held'), 'the child to take the lock');
    const childPid = child.pid;
    expect(readLockHolder(db)?.pid).toBe(childPid);
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // SIGKILL runs no exit handler: the lock directory stays, as after a crash or power loss.
    expect(existsSync(lockPaths(db).lock)).toBe(true);

    // Still fresh by its mtime, but its holder is gone: taken at once, without waiting for it to go stale.
    const lock = await acquireRunLock(db, { waitMs: 0, command: 'collect', staleMs: 60_000 });
    expect(readLockHolder(db)?.pid).toBe(process.pid);
    await lock.release();
    expect(existsSync(lockPaths(db).lock)).toBe(false);
  });

  it('a compromised lock aborts the run through its signal instead of crashing the process', async () => {
    const db = join(dir, 'compromised.duckdb');
    const lines: string[] = [];
    const log = createLogger({ json: true, write: (l) => lines.push(l) });
    const lock = await acquireRunLock(db, { waitMs: 0, command: 'collect', staleMs: 2_000, log });
    expect(lock.signal.aborted).toBe(false);
    // Someone removed the lock directory (or took it over): the next refresh notices.
    rmdirSync(lockPaths(db).lock);
    await until(() => lock.signal.aborted, 'the lock signal to abort');
    expect(lines.some((l) => l.includes('run lock compromised'))).toBe(true);
    await lock.release();
    // Nothing of ours is left to block the next run.
    const next = await acquireRunLock(db, { waitMs: 0, command: 'collect' });
    await next.release();
  });
});
