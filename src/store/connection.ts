// Thin helpers over a DuckDB connection: run a statement with bound parameters, read rows as plain
// objects. Both the Store and the migration runner (which runs before a Store exists) use them.
import type { DuckDBConnection } from '@duckdb/node-api';
import { bindParams, resultConverter } from './values.js';

/** Named parameters ($name), the store's one parameter style. */
export type SqlParams = Record<string, unknown>;

function hasParams(params: SqlParams | undefined): params is SqlParams {
  return params !== undefined && Object.keys(params).length > 0;
}

/** Runs SQL (several statements allowed; parameters bind to the last one). Returns rows changed. */
export async function execSql(conn: DuckDBConnection, sql: string, params?: SqlParams): Promise<number> {
  if (!hasParams(params)) return (await conn.run(sql)).rowsChanged;
  const { values, types } = bindParams(params);
  return (await conn.run(sql, values, types)).rowsChanged;
}

/** Runs a query and returns every row as an object keyed by column name (see resultConverter for types). */
export async function queryRows<T = Record<string, unknown>>(
  conn: DuckDBConnection,
  sql: string,
  params?: SqlParams,
): Promise<T[]> {
  let reader;
  if (hasParams(params)) {
    const { values, types } = bindParams(params);
    reader = await conn.runAndReadAll(sql, values, types);
  } else {
    reader = await conn.runAndReadAll(sql);
  }
  return reader.convertRowObjects(resultConverter) as T[];
}

/** Like queryRows, with the result's column names and types (known even when no row comes back). */
export async function queryTable(
  conn: DuckDBConnection,
  sql: string,
): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }> {
  const reader = await conn.runAndReadAll(sql);
  return {
    columns: reader.columnNames(),
    types: reader.columnTypes().map(String),
    rows: reader.convertRowObjects(resultConverter),
  };
}
