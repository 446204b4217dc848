// Measures the usage load path the collector uses: raw consumption pages (the v2 programs shape) parsed,
// checked and appended into TEMP staging (UsageBatch.appendPage), then the one replacing transaction.
// The pages are built before the clock starts, so append_s is parsing, checking and staging only.
// Run: node --import ./test/store/fixtures/register-ts.mjs bench/store-load.ts [values]
// (or after `npm run build`: node dist/bench/store-load.js [values]). Prints one JSON line.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/store.js';

const ROWS = Number(process.argv[2] ?? 2_000_000);
const PAGE_ROWS = 10_000; // about one API page of programs' hourly buckets over a few metrics
const METRICS = [
  'compute_unit_seconds',
  'root_branch_bytes_month',
  'child_branch_bytes_month',
  'public_network_transfer_bytes',
  'private_network_transfer_bytes',
  'extra_branches_month',
  'instant_restore_bytes_month',
  'snapshot_storage_bytes_month',
];
const HOUR = 3_600_000;
const START = Date.UTC(2025, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000', '');

/** n values as v2 programs pages of about PAGE_ROWS values each (every value non-zero: a zero is not stored). */
function pages(n: number): { pages: string[]; windowEnd: number } {
  const hours = Math.ceil(n / (METRICS.length * 1000));
  const out: string[] = [];
  let programs: unknown[] = [];
  let onPage = 0;
  let i = 0;
  for (let p = 0; i < n; p++) {
    const consumption = [];
    for (let h = 0; h < hours && i < n; h++) {
      const metrics = [];
      for (const metric of METRICS) {
        if (i >= n) break;
        metrics.push({ metric_name: metric, value: (i + 1) * 1_000_003 });
        i++;
      }
      consumption.push({ timeframe_start: iso(START + h * HOUR), timeframe_end: iso(START + (h + 1) * HOUR), metrics });
      onPage += metrics.length;
    }
    programs.push({
      program_id: `prog-${String(p).padStart(6, '0')}`,
      periods: [
        { period_id: `per-${p}`, period_plan: 'scale', period_start: iso(START), period_end: null, consumption },
      ],
    });
    if (onPage >= PAGE_ROWS || i >= n) {
      out.push(JSON.stringify({ programs, pagination: {} }));
      programs = [];
      onPage = 0;
    }
  }
  return { pages: out, windowEnd: START + hours * HOUR };
}

const dir = mkdtempSync(join(tmpdir(), 'store-load-'));
try {
  const store = await openStore({ path: join(dir, 'usage.duckdb') });
  const built = pages(ROWS);
  const windowEnd = new Date(built.windowEnd);
  const batch = store.usage.beginBatch({
    table: 'usage_program',
    granularity: 'hourly',
    windowStart: new Date(START),
    windowEnd,
    scope: { orgId: 'org-bench' },
    coverage: { source: 'v2_programs', scope: 'org-bench', status: 'complete' },
    runId: 'bench',
    collectedAt: new Date(),
  });
  const t0 = performance.now();
  for (const page of built.pages) await batch.appendPage('v2_programs', page);
  const t1 = performance.now();
  const { rows: committed } = await batch.commit();
  const t2 = performance.now();
  await store.checkpoint();
  const t3 = performance.now();
  await store.close();
  const appendS = (t1 - t0) / 1000;
  const commitS = (t2 - t1) / 1000;
  console.log(
    JSON.stringify({
      rows: committed,
      append_s: +appendS.toFixed(2),
      commit_s: +commitS.toFixed(2),
      checkpoint_s: +((t3 - t2) / 1000).toFixed(2),
      append_values_per_s: Math.round(committed / appendS),
      end_to_end_values_per_s: Math.round(committed / (appendS + commitS)),
    }),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
