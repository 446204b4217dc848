// Measures the usage load path: appender into TEMP staging, then the one replacing transaction.
// Run: node --import ./test/store/fixtures/register-ts.mjs bench/store-load.ts [rows]
// (or after `npm run build`: node dist/bench/store-load.js [rows]). Prints one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/store.js';
import type { UsageRowIn } from '../src/store/types.js';

const ROWS = Number(process.argv[2] ?? 2_000_000);
const PAGE_ROWS = 10_000; // about one API page of 100 programs' hourly buckets over a few metrics
const METRICS = ['compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'public_network_transfer_bytes',
  'private_network_transfer_bytes', 'extra_branches_month', 'instant_restore_bytes_month', 'snapshot_storage_bytes_month'];
const HOUR = 3_600_000;
const START = Date.UTC(2025, 0, 1);

function* rows(n: number): Generator<UsageRowIn> {
  const periodStart = new Date(START);
  const hours = Math.ceil(n / (METRICS.length * 1000));
  let i = 0;
  for (let p = 0; i < n; p++) {
    const programId = `prog-${String(p).padStart(6, '0')}`;
    for (let h = 0; h < hours && i < n; h++) {
      const tfStart = new Date(START + h * HOUR);
      const tfEnd = new Date(START + (h + 1) * HOUR);
      for (const metric of METRICS) {
        if (i >= n) break;
        yield { org_id: 'org-bench', program_id: programId, period_id: `per-${p}`, period_plan: 'scale', period_start: periodStart,
          period_end: null, timeframe_start: tfStart, timeframe_end: tfEnd, metric, value: BigInt(i) * 1_000_003n };
        i++;
      }
    }
  }
}

const dir = mkdtempSync(join(tmpdir(), 'store-load-'));
try {
  const store = await openStore({ path: join(dir, 'usage.duckdb') });
  const all = [...rows(ROWS)];
  const windowEnd = new Date(all.reduce((m, r) => Math.max(m, r.timeframe_end.getTime()), 0));
  const batch = store.beginUsageBatch({
    table: 'usage_program', granularity: 'hourly', windowStart: new Date(START), windowEnd,
    scope: { orgId: 'org-bench' }, coverage: { source: 'v2_programs', scope: 'org-bench', status: 'complete' },
    runId: 'bench', collectedAt: new Date(),
  });
  const t0 = performance.now();
  for (let i = 0; i < all.length; i += PAGE_ROWS) await batch.append(all.slice(i, i + PAGE_ROWS));
  const t1 = performance.now();
  const { rows: committed } = await batch.commit();
  const t2 = performance.now();
  await store.checkpoint();
  const t3 = performance.now();
  await store.close();
  const appendS = (t1 - t0) / 1000;
  const commitS = (t2 - t1) / 1000;
  console.log(JSON.stringify({
    rows: committed,
    append_s: +appendS.toFixed(2),
    commit_s: +commitS.toFixed(2),
    checkpoint_s: +((t3 - t2) / 1000).toFixed(2),
    append_values_per_s: Math.round(committed / appendS),
    end_to_end_values_per_s: Math.round(committed / (appendS + commitS)),
  }));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
