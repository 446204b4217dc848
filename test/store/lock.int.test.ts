import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { packageRoot } from '../../src/store/sql.js';
import { openStore, StoreLockedError } from '../../src/store/store.js';
import { tempDir } from '../support/store.js';

/** A log level the test does not look at. */
function quiet(): void {
  // dropped
}

// Another process holding the file, as an analyst's session would: it opens the database read-only
// with DuckDB directly, says "held", and releases it when told to on stdin.
const HOLDER = `
const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const inst = await DuckDBInstance.create(process.argv[1], { access_mode: 'READ_ONLY' });
  const conn = await inst.connect();
  await conn.run('SELECT count(*) FROM usage_program');
  process.stdout.write('held\\n');
  process.stdin.once('data', () => { conn.closeSync(); inst.closeSync(); process.stdout.write('released\\n'); process.exit(0); });
})().catch((e) => { console.error(e); process.exit(1); });
`;

async function holdFile(path: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', HOLDER, path], {
    cwd: packageRoot(),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  expect(chunk.toString()).toContain('held');
  return child;
}

let path: string;
let cleanup: () => void;
const children: ChildProcess[] = [];

beforeEach(async () => {
  const t = tempDir();
  cleanup = t.cleanup;
  path = join(t.dir, 'usage.duckdb');
  await (await openStore({ path })).close();
});
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  cleanup();
});

const quietLog = (warnings: string[]) => {
  const log = { debug: quiet, info: quiet, error: quiet, warn: (m: string) => warnings.push(m), child: () => log };
  return log;
};

describe('the file lock', () => {
  it('waits while another process holds the file, then opens once it is released', async () => {
    const child = await holdFile(path);
    children.push(child);
    const warnings: string[] = [];
    const sleeps: number[] = [];
    const opening = openStore({
      path,
      lockTimeoutMs: 15_000,
      log: quietLog(warnings),
      sleep: async (ms) => {
        sleeps.push(ms);
        await new Promise((r) => setTimeout(r, Math.min(ms, 100)));
      },
    });
    await new Promise((r) => setTimeout(r, 400));
    child.stdin!.write('release\n');
    const store = await opening;
    expect(sleeps.length).toBeGreaterThan(1);
    expect(warnings).toEqual(['database file is in use by another process; waiting for it']);
    await store.runs.start({ runId: 'r', command: 'collect', options: {} });
    await store.close();
  });

  it('gives up after lockTimeoutMs with StoreLockedError that says what to do', async () => {
    const child = await holdFile(path);
    children.push(child);
    const err = await openStore({ path, lockTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreLockedError);
    const message = (err as Error).message;
    expect(message).toContain(`held by PID ${child.pid}`);
    expect(message).toMatch(/Wait for that process to finish/);
    expect(message).toContain(join(path, '..', 'usage.analyst.duckdb'));
  });

  it('a second store on the same file in this process waits for the first', async () => {
    const first = await openStore({ path });
    await expect(openStore({ path, lockTimeoutMs: 200 })).rejects.toBeInstanceOf(StoreLockedError);
    await expect(openStore({ path, readOnly: true, lockTimeoutMs: 200 })).rejects.toThrow(/open in this process/);
    const second = openStore({ path, lockTimeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 150));
    await first.close();
    await (await second).close();
    // Readers share.
    const r1 = await openStore({ path, readOnly: true });
    const r2 = await openStore({ path, readOnly: true });
    await r1.close();
    await r2.close();
  });
});
