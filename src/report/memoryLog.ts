// Where a report's memory is, for its debug log lines: the process's resident set, V8's heap, and
// what DuckDB's buffer manager holds (duckdb_memory(); its allocator's cache and the Parquet writer's
// own buffers are in the resident set only). ARCHITECTURE.md, "Reports", "Memory".
import type { Store } from '../store/store.js';
import { duckdbMemory } from '../store/report/settings.js';

const mb = (bytes: number | bigint) => Math.round(Number(bytes) / 1e6);

export async function memoryFields(store: Store): Promise<Record<string, number>> {
  const m = process.memoryUsage();
  const d = await duckdbMemory(store);
  return { rss_mb: mb(m.rss), heap_mb: mb(m.heapUsed), external_mb: mb(m.external), duckdb_mb: mb(d.used), duckdb_spilled_mb: mb(d.spilled) };
}
