// compactDatabase(): the database written again, whole, into a new file in the store's storage format
// (STORE_STORAGE_VERSION) and renamed over the old one. A DuckDB file keeps the storage format it was
// created in, and reuses its free blocks without ever returning them to the disk: a file made before the
// store wrote that format, or one `prune` emptied, gets the format and the space this way. The new file is
// written aside and renamed into place, so a crash leaves the old file or the new one, never a mix. The
// caller holds the run lock, so no other writer runs meanwhile.
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fsyncPath } from './fsyncPath.js';
import type { Store } from './facade.js';
import { STORE_STORAGE_VERSION } from './open.js';
import { rawSql, type RawSql } from './rawSql.js';
import { quoteIdent, quoteLiteral } from './sql.js';

const TARGET = 'compact_next';
const DATABASE_SQL = 'SELECT current_database() AS name';
// Parameters: $db. Every table, view and macro, so the check covers what the copy must hold.
const OBJECTS_SQL = `SELECT table_name AS name, 'table' AS kind FROM duckdb_tables() WHERE database_name = $db
UNION ALL SELECT view_name, 'view' FROM duckdb_views() WHERE database_name = $db AND NOT internal
UNION ALL SELECT DISTINCT function_name, 'macro' FROM duckdb_functions() WHERE database_name = $db AND NOT internal
ORDER BY kind, name`;

export interface CompactResult {
  db: string;
  formatBefore: string;
  formatAfter: string;
  bytesBefore: number;
  bytesAfter: number;
  tables: number;
}

/** Files `<db>.compact-PID` (and their WAL) a compact that died left behind: the run lock says none runs. */
function removeLeftovers(path: string): void {
  const prefix = `${basename(path)}.compact-`;
  for (const name of readdirSync(dirname(path)))
    if (name.startsWith(prefix) && /^\d+(\.wal)?$/.test(name.slice(prefix.length)))
      rmSync(join(dirname(path), name), { force: true });
}

/** Refuses a copy whose tables, views, macros or row counts differ from the database's. */
async function checkCopy(sql: RawSql, db: string): Promise<number> {
  const [before, after] = [await sql.query(OBJECTS_SQL, { db }), await sql.query(OBJECTS_SQL, { db: TARGET })];
  if (JSON.stringify(before) !== JSON.stringify(after))
    throw new Error('the rewritten database does not hold every table, view and macro of the database');
  const tables = before.filter((o) => o.kind === 'table').map((o) => String(o.name));
  for (const t of tables) {
    const count = (d: string) => sql.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${d}.main.${quoteIdent(t)}`);
    const [[a], [b]] = [await count(quoteIdent(db)), await count(TARGET)];
    if (a?.n !== b?.n) throw new Error(`the rewritten database holds ${b?.n} rows of ${t}, the database ${a?.n}`);
  }
  return tables.length;
}

/** Writes the database into `tmp` in STORE_STORAGE_VERSION and checks it; returns both formats and the tables. */
async function copyInto(
  store: Store,
  tmp: string,
): Promise<{ formatBefore: string; formatAfter: string; tables: number }> {
  const sql = rawSql(store);
  const [{ name } = { name: '' }] = await sql.query<{ name: string }>(DATABASE_SQL);
  const formatBefore = await store.storageFormat();
  await sql.run(`ATTACH ${quoteLiteral(tmp)} AS ${TARGET} (STORAGE_VERSION '${STORE_STORAGE_VERSION}')`);
  try {
    await sql.run(`COPY FROM DATABASE ${quoteIdent(name)} TO ${TARGET}`);
    const tables = await checkCopy(sql, name);
    return { formatBefore, formatAfter: await store.storageFormat(TARGET), tables };
  } finally {
    await sql.run(`DETACH ${TARGET}`);
  }
}

/** Rewrites the open store's file into a new one in STORE_STORAGE_VERSION, renamed into place; closes the store. */
export async function compactDatabase(store: Store): Promise<CompactResult> {
  const path = resolve(store.path);
  const tmp = `${path}.compact-${process.pid}`;
  const removeTmp = () => [tmp, `${tmp}.wal`].forEach((f) => rmSync(f, { force: true }));
  const bytesBefore = statSync(path).size;
  let copied: Awaited<ReturnType<typeof copyInto>>;
  try {
    removeLeftovers(path);
    copied = await copyInto(store, tmp);
  } catch (err) {
    await store.close();
    removeTmp();
    throw err;
  }
  await store.close();
  if (existsSync(`${tmp}.wal`) || existsSync(`${path}.wal`)) {
    removeTmp();
    throw new Error(`a write-ahead log remained after closing ${path}; the database is left as it was`);
  }
  fsyncPath(tmp);
  renameSync(tmp, path);
  fsyncPath(dirname(path));
  return { db: path, ...copied, bytesBefore, bytesAfter: statSync(path).size };
}
