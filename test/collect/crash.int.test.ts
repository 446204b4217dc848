import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import { tempDir } from '../support/store.js';
import { usageFingerprint } from '../support/usage.js';
import { silentLogger } from '../../src/log.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const child = new URL('./fixtures/collect-child.mjs', import.meta.url).pathname;

async function fingerprint(db: string) {
  const store = await openStore({ path: db, readOnly: true });
  return usageFingerprint(store).finally(() => store.close());
}

describe('a collection killed with SIGKILL', () => {
  let sb: Sandbox;
  let reference: string[];

  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', now: NOW, advance: false, latencyMs: 20 });
    const db = join(tempDir('usage-ref-').dir, 'usage.duckdb');
    const r = await collectCommand({
      db,
      env: { USAGE_API_KEY: sb.apiKey },
      baseUrl: sb.baseUrl,
      now: () => NOW,
      log: silentLogger,
    });
    expect(r.exitCode).toBe(0);
    reference = await fingerprint(db);
  });
  afterAll(async () => sb?.close());

  // Kill points spread over the run: during the inventory, and while consumption batches are committing.
  it.each([1200, 4300, 5000])(
    'at %i ms, then re-run, ends with the same database as an uninterrupted run',
    async (killAfterMs) => {
      const db = join(tempDir('usage-kill-').dir, 'usage.duckdb');
      const proc = spawn(process.execPath, [child, db, sb.baseUrl, String(NOW)], {
        env: { ...process.env, USAGE_API_KEY: sb.apiKey },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let finished = false;
      const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
      proc.on('exit', (code, signal) => (finished = signal === null && code !== null));
      await new Promise((r) => setTimeout(r, killAfterMs));
      proc.kill('SIGKILL');
      await exited;
      expect(finished, 'the run finished before it could be killed; lower the kill time').toBe(false);

      const again = await collectCommand({
        db,
        env: { USAGE_API_KEY: sb.apiKey },
        baseUrl: sb.baseUrl,
        now: () => NOW,
        log: silentLogger,
      });
      expect(again.exitCode).toBe(0);
      expect(await fingerprint(db)).toEqual(reference);
    },
  );
});
