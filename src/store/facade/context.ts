// What the Store's topic modules (runs, inventory, coverage, exports, summary) get from it: its
// connection's raw SQL, inside its exclusive section, its transactions and its clock. The Store
// class (store/facade.ts) composes them; callers see only its methods.
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
}

/** A count as DuckDB returns it (BIGINT as bigint) as a number. */
export const num = (v: unknown): number => (typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : 0);
