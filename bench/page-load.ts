// Measures the page load path alone (no HTTP): consumption pages of the hourly frameworks shape parsed,
// checked and appended (usageBatch.ts appendPage), then committed, batch by batch, into a new file
// database. Prints one JSON line: CPU (all threads of this process) split into staging and commit, and
// CPU seconds per million values; what DuckDB and the JavaScript heap hold at the end.
// Run after `npm run build`: node dist/bench/page-load.js [threads]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { V2_FRAMEWORK_METRICS } from '../src/contract/api.js';
import { openStore } from '../src/store/store.js';
import { rawSql } from '../src/store/rawSql.js';

const THREADS = Number(process.argv[2] ?? 1);
const BATCHES = 8;
const PAGES = 5; // per batch
const HOURS = 6;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 19);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000', '');

/** One page of 1,000 frameworks (10 per program, a plan period per program), HOURS buckets each. */
function page(b: number, p: number): string {
  const frameworks = [];
  for (let f = 0; f < 1000; f++) {
    const program = `prog-${b}-${p}-${Math.floor(f / 10)}`;
    const consumption = [];
    for (let h = 0; h < HOURS; h++) {
      consumption.push({
        timeframe_start: iso(T0 + h * HOUR),
        timeframe_end: iso(T0 + (h + 1) * HOUR),
        metrics: V2_FRAMEWORK_METRICS.map((m, i) => ({
          metric_name: m,
          value: ((f * 7919 + h * 104729 + i * 13) % 100_000_000) + 1,
        })),
      });
    }
    frameworks.push({
      program_id: program,
      framework_id: `br-${b}-${p}-${f}`,
      periods: [
        {
          period_id: `per-${program}`,
          period_plan: 'scale',
          period_start: '2026-10-01T00:00:00Z',
          period_end: null,
          consumption,
        },
      ],
    });
  }
  return JSON.stringify({ frameworks, pagination: {} });
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'page-load-'));
  try {
    const store = await openStore({ path: join(dir, 'usage.duckdb'), threads: THREADS });
    const pages = Array.from({ length: BATCHES * PAGES }, (_, i) => page(Math.floor(i / PAGES), i % PAGES));
    let stageMs = 0;
    let commitMs = 0;
    let values = 0;
    for (let b = 0; b < BATCHES; b++) {
      const batch = store.usage.beginBatch({
        table: 'usage_framework',
        granularity: 'hourly',
        windowStart: new Date(T0),
        windowEnd: new Date(T0 + HOURS * HOUR),
        scope: {},
        runId: 'page-load',
        collectedAt: new Date(),
        coverage: { source: 'v2_frameworks', scope: `batch-${b}`, status: 'complete' },
      });
      let t = cpuMs();
      for (let p = 0; p < PAGES; p++) values += (await batch.appendPage('v2_frameworks', pages[b * PAGES + p]!)).rows;
      stageMs += cpuMs() - t;
      t = cpuMs();
      await batch.commit();
      commitMs += cpuMs() - t;
    }
    const [duck] = await rawSql(store).query<{ mb: number }>(
      'SELECT round(sum(memory_usage_bytes) / 1048576) AS mb FROM duckdb_memory()',
    );
    const mu = process.memoryUsage();
    await store.close();
    console.log(
      JSON.stringify({
        threads: THREADS,
        values,
        stage_cpu_ms: Math.round(stageMs),
        commit_cpu_ms: Math.round(commitMs),
        cpu_s_per_million_values: Number(((stageMs + commitMs) / 1000 / (values / 1e6)).toFixed(2)),
        duckdb_memory_mb: Number(duck?.mb ?? 0),
        heap_mb: Math.round(mu.heapTotal / 2 ** 20),
        rss_mb: Math.round(mu.rss / 2 ** 20),
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
