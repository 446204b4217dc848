// A month's report files are one set: a re-run killed at any moment leaves the old set or the new one,
// never a mix, and the next run removes what the killed one left.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';
import { cli, startCli } from '../support/cli.js';
import { HANG_MS } from '../support/fixture.js';
import { loadMonthFile } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';

interface Manifest {
  total: string;
  files: { name: string; sha256: string }[];
}

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

/** The month folder holds exactly the files its manifest names, each with the manifest's sha256. */
function expectOneConsistentSet(monthDir: string): Manifest {
  const manifest = JSON.parse(readFileSync(join(monthDir, 'manifest.json'), 'utf8')) as Manifest;
  expect(readdirSync(monthDir).sort()).toEqual([...manifest.files.map((f) => f.name), 'manifest.json'].sort());
  for (const f of manifest.files) expect(sha(join(monthDir, f.name)), f.name).toBe(f.sha256);
  return manifest;
}

describe('a report re-run killed part-way', { timeout: HANG_MS }, () => {
  let dir: string;
  let db: string;
  const out = () => join(dir, 'reports');
  const args = (month: string) => [
    'report',
    '--month',
    month,
    '--db',
    db,
    '--out',
    out(),
    '--prices',
    BOOK,
    '--format',
    'parquet,xlsx,html',
  ];

  beforeAll(async () => {
    ({ dir, db } = await loadMonthFile(MONTH));
  });

  it('leaves the old set or the new one at every moment, and the next run cleans up', async () => {
    const old = await cli(args(MONTH));
    expect(old.code, old.stderr).toBe(0);
    const monthDir = join(out(), MONTH);
    const first = expectOneConsistentSet(monthDir);

    // The new set differs: every value doubled (a restatement, say).
    const store = await openStore({ path: db });
    await rawSql(store).run(
      'UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds * 2, root_branch_bytes_month = root_branch_bytes_month * 2, child_branch_bytes_month = child_branch_bytes_month * 2, instant_restore_bytes_month = instant_restore_bytes_month * 2, public_network_transfer_bytes = public_network_transfer_bytes * 2, private_network_transfer_bytes = private_network_transfer_bytes * 2, extra_branches_month = extra_branches_month * 2, snapshot_storage_bytes_month = snapshot_storage_bytes_month * 2, active_time_seconds = active_time_seconds * 2, compute_time_seconds = compute_time_seconds * 2, written_data_bytes = written_data_bytes * 2, synthetic_storage_size_bytes = synthetic_storage_size_bytes * 2, data_storage_bytes_hour = data_storage_bytes_hour * 2, logical_size_bytes = logical_size_bytes * 2, logical_size_bytes_hour = logical_size_bytes_hour * 2',
    );
    await rawSql(store).run(
      'UPDATE usage_framework_buckets SET compute_unit_seconds = compute_unit_seconds * 2, root_branch_bytes_month = root_branch_bytes_month * 2, child_branch_bytes_month = child_branch_bytes_month * 2, instant_restore_bytes_month = instant_restore_bytes_month * 2, public_network_transfer_bytes = public_network_transfer_bytes * 2, private_network_transfer_bytes = private_network_transfer_bytes * 2',
    );
    await store.close();

    const seen = new Set<string>();
    let kills = 0;
    // Kill moments: as soon as the new set's folder appears, once it holds a file, once it is complete
    // beside the live set (before or just after the link swap), and after a few fixed delays; each kill
    // must leave one consistent set behind.
    const triggers: { name: string; ready: () => boolean }[] = [
      { name: 'stage folder created', ready: () => readdirSync(out()).some((n) => n.includes('.new-')) },
      {
        name: 'first file in the stage folder',
        ready: () =>
          readdirSync(out()).some(
            (n) => n.includes('.new-') && readdirSync(join(out(), n)).some((f) => !f.startsWith('.')),
          ),
      },
      {
        name: 'new set complete beside the live one',
        ready: () => readdirSync(out()).filter((n) => n.includes('.set-')).length >= 2,
      },
      ...[150, 400, 800, 1500].map((ms) => {
        const at = () => Date.now();
        let start = 0;
        return { name: `${ms} ms`, ready: () => ((start ||= at()), at() - start >= ms) };
      }),
    ];
    for (const t of triggers) {
      const run = startCli(args(MONTH));
      await new Promise<void>((resolve) => {
        const poll = () => {
          if (run.proc.exitCode !== null) return resolve();
          try {
            if (t.ready()) {
              run.proc.kill('SIGKILL');
              kills++;
              return resolve();
            }
          } catch {
            // a folder vanished between readdir calls: look again
          }
          setImmediate(poll);
        };
        poll();
      });
      await run.done;
      const m = expectOneConsistentSet(monthDir);
      seen.add(m.total);
    }

    // The moments tied to the new folder always come before the run ends: those runs were killed.
    expect(kills).toBeGreaterThanOrEqual(2);

    // Whatever was killed, the next run completes, cleans up, and leaves only the new set.
    const done = await cli(args(MONTH));
    expect(done.code, done.stderr).toBe(0);
    const final = expectOneConsistentSet(monthDir);
    expect(final.total).not.toBe(first.total);
    // Only the month's link and the one set it points at remain.
    const entries = readdirSync(out()).sort();
    expect(entries.filter((n) => !n.includes('.set-'))).toEqual([MONTH]);
    expect(entries.filter((n) => n.includes('.set-'))).toEqual([basename(readlinkSync(monthDir))]);
    expect(existsSync(join(out(), MONTH, 'manifest.json'))).toBe(true);
    // Every set a kill left behind was either the old one or the new one.
    for (const total of seen) expect([first.total, final.total]).toContain(total);
  });
});
