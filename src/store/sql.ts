// Where the SQL files live and how identifiers and literals are quoted. SQL is kept in queries/*.sql;
// values are bound as parameters, and the few names that cannot be (identifiers, ATTACH paths) go
// through the helpers below.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The directory holding package.json and queries/. Walks up from this module, so it works from
 * src/store under vitest and from dist/src/store when built. It also requires queries/ beside
 * package.json, because a build may emit a copy of package.json into dist/.
 */
export function packageRoot(): string {
  if (root !== undefined) return root;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'queries'))) {
      root = dir;
      return dir;
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the package root (package.json with queries/) above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

const sqlCache = new Map<string, string>();

/** The text of a SQL file, relative to the package root (e.g. 'src/store/sql/insert_usage_program.sql'); cached. */
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
