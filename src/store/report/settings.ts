// DuckDB's limits while a report runs (report/run.ts decides them): read before, set, given back after.
import type { StoreContext } from '../facade/context.js';
import { quoteLiteral } from '../sql.js';

const SETTINGS_NOW =
  "SELECT current_setting('threads') AS threads, " +
  "current_setting('preserve_insertion_order') AS preserve_insertion_order, " +
  "current_setting('allocator_flush_threshold') AS flush, current_setting('allocator_background_threads') AS background, " +
  "current_setting('allocator_bulk_deallocation_flush_threshold') AS bulk_flush, " +
  "current_setting('enable_external_file_cache') AS file_cache";

export interface ReportSettings {
  memory_limit: string;
  threads: bigint | number;
  preserve_insertion_order: boolean;
  flush: string;
  background: boolean;
  bulk_flush: string;
  file_cache: boolean;
}

const DUCKDB_MEMORY_SQL =
  'SELECT CAST(sum(memory_usage_bytes) AS BIGINT) AS used, CAST(sum(temporary_storage_bytes) AS BIGINT) AS spilled FROM duckdb_memory()';

const DUCKDB_MEMORY_TAGS_SQL =
  'SELECT tag, CAST(memory_usage_bytes AS BIGINT) AS bytes FROM duckdb_memory() WHERE memory_usage_bytes > 0 ORDER BY memory_usage_bytes DESC';

/** DuckDB's settings while a report runs (Store.report.settings). */
export class ReportSettingsControl {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** The connection's settings a report changes. */
  async reportSettings(): Promise<ReportSettings> {
    // The limit as the store set it: current_setting() shows it rounded ('488.2 MiB').
    const [before] = await this.cx.sql.query<Omit<ReportSettings, 'memory_limit'>>(SETTINGS_NOW);
    return { ...before!, memory_limit: this.cx.memoryLimit() };
  }

  /** Keeps insertion order (the report tables are created in line order and copied in insertion order). */
  async keepInsertionOrder(): Promise<void> {
    await this.cx.sql.run('SET preserve_insertion_order = true');
  }

  /** SET threads. */
  async setThreads(threads: number): Promise<void> {
    if (!Number.isInteger(threads) || threads < 1)
      throw new Error(`threads must be a positive integer, not ${threads}`);
    await this.cx.sql.run(`SET threads = ${threads}`);
  }

  /**
   * SET allocator_flush_threshold and allocator_background_threads, and
   * allocator_bulk_deallocation_flush_threshold to `flush` too (its default, 512 MiB, is never reached
   * by a bulk free under a report's limit, so the allocator kept what a stage freed).
   */
  async setAllocator(flush: string, background: boolean): Promise<void> {
    await this.cx.sql.run(`SET allocator_flush_threshold = ${quoteLiteral(flush)}`);
    await this.cx.sql.run(`SET allocator_bulk_deallocation_flush_threshold = ${quoteLiteral(flush)}`);
    await this.cx.sql.run(`SET allocator_background_threads = ${background ? 'true' : 'false'}`);
  }

  /**
   * SET enable_external_file_cache: DuckDB keeps the Parquet files it reads (the report's stage parts,
   * each read once or twice and in the OS's page cache anyway) in its buffer pool, up to its memory limit.
   */
  async setExternalFileCache(on: boolean): Promise<void> {
    await this.cx.sql.run(`SET enable_external_file_cache = ${on ? 'true' : 'false'}`);
  }

  /**
   * Frees the blocks of the database's tables that DuckDB keeps cached: it keeps what it read until something
   * needs the memory, and after a report's stages nothing does (BENCHMARKS.md, "The report's cached blocks
   * dropped after the stages (2026-11-24)"). The limit lowered to `floor` for a moment
   * makes DuckDB evict them (they are in the file, so eviction only frees them; TEMP tables above the floor are
   * spilled), then the store's limit is set again, which also hands the freed memory back. Returns false when
   * DuckDB could not get down to the floor (memory in use): the limit is the store's again either way.
   */
  async dropCachedBlocks(floor: string): Promise<boolean> {
    const limit = this.cx.memoryLimit();
    try {
      await this.cx.setMemoryLimit(floor);
      return true;
    } catch {
      return false;
    } finally {
      await this.cx.setMemoryLimit(limit);
    }
  }

  /** Gives back the settings read by reportSettings. */
  async restoreSettings(before: ReportSettings): Promise<void> {
    const sql = this.cx.sql;
    await this.cx.setMemoryLimit(before.memory_limit);
    await sql.run(`SET threads = ${Number(before.threads)}`);
    await sql.run(`SET preserve_insertion_order = ${before.preserve_insertion_order ? 'true' : 'false'}`);
    await sql.run(`SET allocator_flush_threshold = ${quoteLiteral(before.flush.replace(/\s+/g, ''))}`);
    await sql.run(`SET allocator_background_threads = ${before.background ? 'true' : 'false'}`);
    await sql.run(
      `SET allocator_bulk_deallocation_flush_threshold = ${quoteLiteral(before.bulk_flush.replace(/\s+/g, ''))}`,
    );
    await this.setExternalFileCache(before.file_cache);
  }

  /** What DuckDB's buffer manager holds and has spilled, in bytes (its allocator's cache is in the RSS only). */
  async duckdbMemory(): Promise<{ used: bigint; spilled: bigint }> {
    const [d] = await this.cx.sql.query<{ used: bigint | null; spilled: bigint | null }>(DUCKDB_MEMORY_SQL);
    return { used: d?.used ?? 0n, spilled: d?.spilled ?? 0n };
  }

  /** What DuckDB's buffer manager holds, per tag (BASE_TABLE, IN_MEMORY_TABLE, EXTERNAL_FILE_CACHE, ...), largest first. */
  async duckdbMemoryByTag(): Promise<{ tag: string; bytes: bigint }[]> {
    return this.cx.sql.query<{ tag: string; bytes: bigint }>(DUCKDB_MEMORY_TAGS_SQL);
  }
}
