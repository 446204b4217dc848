// Raw SQL on a store's connection, for the store's own modules and for the analysts' `query` command
// (app/query.ts runs the user's SQL). Everything else reads and writes through the Store's typed
// topic objects (store.runs, ..., store.report); the import rule "sql-stays-in-the-store" of
// .dependency-cruiser.cjs (ARCHITECTURE.md, "What each folder may import") keeps it so.
import type { SqlParams } from './connection.js';

/** The key under which a Store keeps its raw SQL access (not a public method of the Store). */
export const RAW_SQL: unique symbol = Symbol('raw SQL');

export interface RawSql {
  /**
   * Runs a query and returns row objects. Types: BIGINT/HUGEINT -> bigint, TIMESTAMPTZ -> Date,
   * DECIMAL -> string with every digit, VARCHAR -> string, INTEGER/DOUBLE -> number, NULL -> null.
   * Parameters: Date binds as TIMESTAMPTZ, bigint as BIGINT, arrays as lists; named ($name) from an object.
   */
  query<T = Record<string, unknown>>(sql: string, params?: SqlParams): Promise<T[]>;
  /** One statement (several allowed; parameters bind to the last one). */
  run(sql: string, params?: SqlParams): Promise<void>;
  /** One ad-hoc statement (the `query` command): its column names, their DuckDB types ('DATE', ...) and rows. */
  queryTable(sql: string): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }>;
}

/** The raw SQL access of a store, inside its exclusive section like every other store operation. */
export function rawSql(store: { readonly [RAW_SQL]: RawSql }): RawSql {
  return store[RAW_SQL];
}
