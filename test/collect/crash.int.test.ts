import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { collectCommand } from '../../src/cli/collect.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { openStore } from '../../src/store/store.js';
import { tempDir } from '../support/store.js';
import { usageFingerprint } from '../support/usage.js';
import { silentLogger } from '../../src/log.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const child = new URL('./fixtures/collect-child.mjs', import.meta.url).pathname;
/** One world for every sandbox of this file: the same seed, scenario and frozen clock serve the same data. */
const WORLD = { scenario: 'small', now: NOW, advance: false, latencyMs: 20 } as const;

async function fingerprint(db: string) {
  const store = await openStore({ path: db, readOnly: true });
  return usageFingerprint(store).finally(() => store.close());
}

const collect = (sb: Sandbox, db: string) =>
  collectCommand({ db, env: { USAGE_API_KEY: sb.apiKey }, baseUrl: sb.baseUrl, now: () => NOW, log: silentLogger });

/** Pages a sandbox has served on the routes whose path starts with `prefix`. */
const served = (sb: Sandbox, prefix: string) =>
  Object.entries(sb.stats().byRoute)
    .filter(([route]) => route.startsWith(prefix))
    .reduce((n, [, c]) => n + c, 0);

// Kill points spread over the run: while consumption batches are committing, as the inventory's listings
// start, and late in them. Each is a count of pages the sandbox served, so the kill lands in that phase
// whatever the machine's load (a fixed delay fell in another phase, or before any request, on a busy one).
const KILL_POINTS = [
  ['while consumption batches commit', '/consumption_history/', 3],
  ['as the inventory listings start', '/programs/{id}/', 2],
  ['late in the inventory listings', '/programs/{id}/', 24],
] as const;

// The cases run at once, each with a sandbox of its own (its own rate budget and request counts): a paced
// collection spends most of its time waiting for its turn to send, so the cases overlap those waits.
describe.concurrent('a collection killed with SIGKILL', () => {
  let sb: Sandbox;
  let reference: Promise<string[]>;

  beforeAll(async () => {
    sb = await startSandbox(WORLD);
    const db = join(tempDir('usage-ref-').dir, 'usage.duckdb');
    // Collected while the cases run; each awaits it only to compare.
    reference = collect(sb, db).then(async (r) => {
      if (r.exitCode !== 0) throw new Error(`the uninterrupted run exited ${r.exitCode}`);
      return fingerprint(db);
    });
    reference.catch(() => undefined); // awaited by every case; not unhandled meanwhile
  });
  afterAll(async () => sb?.close());

  it.for(KILL_POINTS)(
    'killed %s, then re-run, ends with the same database as an uninterrupted run',
    async ([, route, pages], { expect }) => {
      const own = await startSandbox(WORLD);
      try {
        const db = join(tempDir('usage-kill-').dir, 'usage.duckdb');
        const proc = spawn(process.execPath, [child, db, own.baseUrl, String(NOW)], {
          env: { ...process.env, USAGE_API_KEY: own.apiKey },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let finished = false;
        const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
        proc.on('exit', (code, signal) => (finished = signal === null && code !== null));
        // Ends on the kill point, or on the run's exit (then the test fails below).
        while (proc.exitCode === null && proc.signalCode === null && served(own, route) < pages) {
          await new Promise((r) => setTimeout(r, 10));
        }
        proc.kill('SIGKILL');
        await exited;
        expect(finished, 'the run finished before it could be killed').toBe(false);

        const again = await collect(own, db);
        expect(again.exitCode).toBe(0);
        expect(await fingerprint(db)).toEqual(await reference);
      } finally {
        await own.close();
      }
    },
  );
});
