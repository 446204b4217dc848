// Where the SQL files live and how identifiers and literals are quoted. SQL is kept beside its owner (src/*/sql/) and in queries/;
// values are bound as parameters, and the few names that cannot be (identifiers, ATTACH paths) go
// through the helpers below.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../config/packageRoot.js';

export { packageRoot };

const sqlCache = new Map<string, string>();

/** The text of a SQL file, relative to the package root (e.g. 'src/store/sql/alert_budget_days.sql'); cached. */
export function readSql(relPath: string): string {
  let text = sqlCache.get(relPath);
  if (text === undefined) {
    text = readFileSync(join(packageRoot(), relPath), 'utf8');
    sqlCache.set(relPath, text);
  }
  return text;
}

/** The one identifier quoting helper: "name" with embedded quotes doubled. */
export function quoteIdent(name: string): string {
  if (name.length === 0) throw new Error('an SQL identifier cannot be empty');
  if (name.includes('\u0000')) throw new Error('an SQL identifier cannot contain a NUL character');
  return '"' + name.replaceAll('"', '""') + '"';
}

/**
 * A string literal, for the few places DuckDB accepts no parameter (ATTACH, COPY ... TO paths).
 * Everything else binds values as parameters.
 */
export function quoteLiteral(value: string): string {
  if (value.includes('\u0000')) throw new Error('an SQL string literal cannot contain a NUL character');
  return "'" + value.replaceAll("'", "''") + "'";
}
