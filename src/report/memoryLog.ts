// Where a report's memory is, for its debug log lines: the process's resident set, V8's heap, and
// what DuckDB's buffer manager holds, in total and per tag (duckdb_memory(); its allocator's cache and the Parquet writer's
// own buffers are in the resident set only). ARCHITECTURE.md, "Reports", "Memory".
import type { Store } from '../store/store.js';

const mb = (bytes: number | bigint) => Math.round(Number(bytes) / 1e6);

export async function memoryFields(store: Store): Promise<Record<string, number | string>> {
  const m = process.memoryUsage();
  const d = await store.report.settings.duckdbMemory();
  // Which of DuckDB's holdings (tables, the file cache, operators) the duckdb_mb figure is.
  const tags = (await store.report.settings.duckdbMemoryByTag())
    .filter((t) => mb(t.bytes) > 0)
    .map((t) => `${t.tag}=${mb(t.bytes)}`)
    .join(' ');
  return {
    rss_mb: mb(m.rss),
    heap_mb: mb(m.heapUsed),
    external_mb: mb(m.external),
    array_buffers_mb: mb(m.arrayBuffers),
    duckdb_mb: mb(d.used),
    duckdb_spilled_mb: mb(d.spilled),
    duckdb_tags: tags,
  };
}
