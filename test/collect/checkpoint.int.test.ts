// A collection checkpoints what it committed before the alerts are evaluated: DuckDB's write-ahead log
// is empty when the alerts phase starts, so no commit made at the alerts' lower memory limit has the
// run's changes to write into the file (which spilled them to `<db>.tmp/`).
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli } from '../support/cli.js';
import { fixture, HANG_MS, until, type Fixture } from '../support/fixture.js';
import { openStore } from '../../src/store/store.js';

const NOW = Date.parse('2026-11-21T10:30:00Z');

const walBytes = (db: string) => (existsSync(`${db}.wal`) ? statSync(`${db}.wal`).size : 0);

describe('the collect checkpoints before the alerts', { timeout: HANG_MS }, () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture({ scenario: 'small', now: NOW, advance: false, fast: true });
  });
  afterAll(async () => f?.cleanup());

  it('holds nothing in the write-ahead log when the alerts phase starts, and the run completes', async () => {
    const db = join(f.dir, 'held.duckdb');
    const args = ['collect', '--config', f.configPath, '--db', db, '--from', '2026-11-14', '--to', '2026-11-21'];
    const r = startCli([...args, '--granularity', 'daily'], {
      cwd: f.dir,
      env: { HOME: f.dir, ...f.env, USAGE_HOLD_PHASE: 'alerts:120000' },
      guardMs: HANG_MS,
    });
    await until(() => r.lines().some((l) => l.msg === 'phase' && l.phase === 'alerts'), 'phase alerts');
    expect(r.lines().find((l) => l.phase === 'alerts')?.values_loaded).toBeGreaterThan(0);
    // The checkpoint is a phase of its own, announced after the consumption and before the alerts.
    const phases = r.lines().flatMap((l) => (l.msg === 'phase' ? [l.phase] : []));
    expect(phases.slice(-2)).toEqual(['checkpoint', 'alerts']);
    expect(walBytes(db)).toBe(0);
    // A stop ends the hold: what was collected is complete, and the file opens holding it.
    r.proc.kill('SIGINT');
    const exit = await r.done;
    expect(exit.code, exit.stderr.slice(-2000)).toBe(130);
    const store = await openStore({ path: db, readOnly: true });
    try {
      const [run] = await store.runs.last(1);
      expect(run?.status).toBe('complete');
      expect(run?.rowsLoaded).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });
});
