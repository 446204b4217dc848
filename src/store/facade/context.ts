// What the Store's topic objects (runs, inventory, coverage, usage, dataset, report) get from it: its
// connection's raw SQL inside its exclusive section, its transactions, its memory limit and its clock.
// The Store (store/facade.ts) creates each topic object once with this context and exposes it as a
// readonly property; callers see only the topics' typed methods.
import type { DuckDBConnection } from '@duckdb/node-api';
import type { SqlParams } from '../connection.js';
import type { RawSql } from '../rawSql.js';

export interface StoreContext {
  /** The main connection (the inventory's upserts write through it, inside the exclusive section). */
  readonly conn: DuckDBConnection;
  readonly sql: RawSql;
  /** One statement; returns the rows it changed. */
  exec(sql: string, params?: SqlParams): Promise<number>;
  transaction<T>(fn: () => Promise<T>): Promise<T>;
  exclusive<T>(fn: () => Promise<T>): Promise<T>;
  now(): Date;
  /** DuckDB's memory_limit as the store set it, setting it again, and handing back what the allocators keep (Store). */
  memoryLimit(): string;
  setMemoryLimit(limit: string): Promise<void>;
  releaseMemory(): Promise<void>;
}

/** A count as DuckDB returns it (BIGINT as bigint) as a number. */
export const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : 0);
