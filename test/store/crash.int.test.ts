import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { packageRoot } from '../../src/store/sql.js';
import { openStore } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, useTempDbPath } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const dbPath = useTempDbPath();

const PROGRAMS = 500; // x 24 hours x 10 metrics = 120,000 rows in the killed batch

/** Runs the child, kills it with SIGKILL `delayMs` after it starts committing; says what it printed. */
function commitAndKill(delayMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['test/store/fixtures/commit-child.mjs', dbPath(), String(PROGRAMS), '2'], {
      cwd: packageRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('committing')) setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve(out);
      else reject(new Error(`child failed (${code}): ${err}`));
    });
  });
}

describe('a process killed during a batch commit', () => {
  it('leaves either all or none of the batch, never part of it', async () => {
    // The window holds an earlier collection (value 1, fewer programs) that the killed batch replaces.
    const seed = await openStore({ path: dbPath() });
    const seedRows = hourlyRows({
      programs: ['p0', 'p1', 'p2'],
      fromHour: 0,
      toHour: 24,
      metrics: ['compute_unit_seconds', 'root_branch_bytes_month'],
      value: () => 1n,
    });
    await load(seed, spec({ windowStart: at(0), windowEnd: at(24), runId: 'seed' }), seedRows);
    await seed.close();

    const outcomes: string[] = [];
    // Killed as the commit starts, and a little later (the commit of 120,000 rows takes a few hundred ms).
    for (const delayMs of [0, 150]) {
      const printed = await commitAndKill(delayMs);
      const store = await openStore({ path: dbPath() });
      const [state] = await rawSql(store).query<{ n: bigint; total: bigint; runs: string; coverage: string }>(
        `SELECT count(*) AS n, sum(value)::BIGINT AS total, string_agg(DISTINCT run_id, ',') AS runs,
                (SELECT string_agg(run_id || ':' || rows, ',') FROM coverage) AS coverage
         FROM usage_program`,
      );
      const all = { n: 120_000n, total: 240_000n, runs: 'crash', coverage: 'crash:120000' };
      const none = { n: 144n, total: 144n, runs: 'seed', coverage: 'seed:144' };
      if (state!.runs === 'crash') {
        expect(state).toEqual(all);
        outcomes.push(`${delayMs}ms:all`);
      } else {
        expect(state).toEqual(none);
        expect(printed).not.toContain('committed');
        outcomes.push(`${delayMs}ms:none`);
      }
      // Put the seed back for the next round, which also proves the file is writable after the crash.
      await load(store, spec({ windowStart: at(0), windowEnd: at(24), runId: 'seed' }), seedRows);
      await store.close();
    }
    expect(outcomes).toHaveLength(2);
  });
});
