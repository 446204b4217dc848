// The analyst copy. DuckDB lets a single process hold a file for writing, and an analyst's open
// session (even read-only) would block the collector, or the collector would block the analyst.
// So analysts never open the collector's file: after each run the collector publishes a copy next to
// it and renames it into place. An analyst session keeps the inode it opened, so a later publish never
// disturbs it; the next session opens the new copy.
//
// A full copy of the file costs what the whole history costs, on every run. So the tables that grow with
// history (analystParts.ts) are kept beside the copy as Parquet files, one per part (an hourly day, a
// month, a finalisation), each written once under a new name and never changed; a publish writes only
// the parts that writes marked in analyst_dirty since the last one. The copy itself is small: the other
// tables copied whole, every view and macro, and each parted table as a view over its part files. The
// parts' record (analyst_parts) is committed with the clearing of the marks, after the files are on
// disk, so a crash leaves either the old or the new record, and a file is removed only an hour after
// the copy that stopped naming it was published.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Logger } from '../log.js';
import { pidAlive } from '../process.js';
import { LOOKBACK_MS } from '../contract/api.js';
import { PARTED_TABLE_NAMES, PARTED_TABLES, type PartedTable } from './analystParts.js';
import { fsyncPath } from './fsyncPath.js';
import { rawSql, type RawSql } from './rawSql.js';
import { quoteIdent, quoteLiteral } from './sql.js';
import { memoryBytes } from './facade.js';
import { analystCopyName, openStore, type Store } from './store.js';

/** How long a replaced part file stays after the copy that no longer names it was published. */
export const RETIRED_GRACE_MS = 3_600_000;

/** DuckDB's memory limit while publishing (or the store's own, when lower): publishing streams rows into
 *  files and needs little, and at the collect's 128MB what DuckDB cached of the rows it read raised the
 *  benchmark's daily collect to 552 MB of RSS (BENCHMARKS.md, "Publishing at 64MB, part files in smaller
 *  row groups (2026-11-29)"). */
export const PUBLISH_MEMORY_LIMIT = '64MB';

/** The analyst copy of a database file: data/usage.duckdb -> data/usage.analyst.duckdb. */
export function analystCopyPath(dbPath: string): string {
  return analystCopyName(dbPath);
}

/** The folder of a copy's part files: data/usage.analyst.duckdb -> data/usage.analyst.parts. */
export function analystPartsDir(copyPath: string): string {
  return `${copyPath.replace(/\.duckdb$/i, '')}.parts`;
}

const ATTACHED = 'analyst_next';
/** The copy is opened by analysts' own DuckDB (CLI, Python), so it keeps DuckDB's default storage
 *  format, which DuckDB 1.0 and later read, not the store's newer one. */
const ANALYST_STORAGE_VERSION = 'v1.0.0';

// Parameters: none.
const DIRTY_SQL = 'SELECT DISTINCT table_name, part FROM analyst_dirty';
const PARTS_SQL = 'SELECT table_name, part, file FROM analyst_parts ORDER BY table_name, part';
const SIGNATURES_SQL = 'SELECT table_name, columns FROM analyst_tables';
const TABLES_SQL = `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main'
ORDER BY table_name`;
const COLUMNS_SQL = `SELECT table_name, column_name, data_type FROM duckdb_columns()
WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name, column_index`;
const DATABASE_SQL = 'SELECT current_database() AS name';
// Parameters: $table_name, $part, $file (NULL: no rows), $rows. The record of one written part.
const PART_RETIRE_SQL = `INSERT INTO analyst_retired
SELECT file, NULL FROM analyst_parts WHERE table_name = $table_name AND part = $part ON CONFLICT DO NOTHING`;
const PART_FORGET_SQL = 'DELETE FROM analyst_parts WHERE table_name = $table_name AND part = $part';
const PART_RECORD_SQL = 'INSERT INTO analyst_parts VALUES ($table_name, $part, $file, $rows)';
const DIRTY_CLEAR_SQL = 'DELETE FROM analyst_dirty';
// Parameters: $table_name, $columns.
const SIGNATURE_SET_SQL = 'INSERT OR REPLACE INTO analyst_tables VALUES ($table_name, $columns)';
// Parameters: $now, $cutoff TIMESTAMPTZ.
const RETIRED_STAMP_SQL = 'UPDATE analyst_retired SET retired_at = $now WHERE retired_at IS NULL';
const RETIRED_EXPIRED_SQL = 'SELECT file FROM analyst_retired WHERE retired_at <= $cutoff';
// Parameters: $files VARCHAR[].
const RETIRED_DROP_SQL = 'DELETE FROM analyst_retired WHERE list_contains($files, file)';
const KNOWN_FILES_SQL = 'SELECT file FROM analyst_parts UNION ALL SELECT file FROM analyst_retired';

// The parts a parted table holds now, and the rows of one part (parameters from partParams).
const PART_LIST: Record<(typeof PARTED_TABLES)[PartedTable], string> = {
  buckets: `granularity || '/' || CASE WHEN granularity = 'hourly' THEN strftime(timezone('UTC', timeframe_start), '%Y-%m-%d')
    ELSE strftime(timezone('UTC', timeframe_start), '%Y-%m') END`,
  day: 'CAST(usage_day AS VARCHAR)',
  finalization: 'finalization_id',
};
const PART_FILTER: Record<(typeof PARTED_TABLES)[PartedTable], string> = {
  buckets: 'granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to',
  day: 'usage_day = CAST($day AS DATE)',
  finalization: 'finalization_id = $id',
};

/** The bound parameters of one part's rows. */
export function partParams(table: PartedTable, part: string): Record<string, unknown> {
  switch (PARTED_TABLES[table]) {
    case 'buckets': {
      const [granularity, key] = part.split('/') as [string, string];
      const from = new Date(`${key.length === 7 ? `${key}-01` : key}T00:00:00Z`);
      const to =
        key.length === 7
          ? new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1))
          : new Date(from.getTime() + 86_400_000);
      return { granularity, from, to };
    }
    case 'day':
      return { day: part };
    case 'finalization':
      return { id: part };
  }
}

interface Column {
  name: string;
  type: string;
}

const isParted = (t: string): t is PartedTable => Object.hasOwn(PARTED_TABLES, t);
const signature = (cols: readonly Column[]) => cols.map((c) => `${c.name} ${c.type}`).join(', ');

// Bucket parts sit in Hive folders by granularity (granularity=hourly/2026-11-27.<gen>.parquet), the column
// left out of the files: a query on one granularity opens none of the other's files (hourly days are most).
const HIVE_COLUMN = 'granularity';
const hive = (table: PartedTable) => PARTED_TABLES[table] === 'buckets';

/** Where one part's file goes below the parts folder, written by generation `gen`. */
function partFile(k: PartKey, gen: string): string {
  if (!hive(k.table)) return `${k.table}/${encodeURIComponent(k.part)}.${gen}.parquet`;
  const [granularity, key] = k.part.split('/') as [string, string];
  return `${k.table}/${HIVE_COLUMN}=${encodeURIComponent(granularity)}/${encodeURIComponent(key)}.${gen}.parquet`;
}

// Row groups of about 30,720 rows (a quarter of DuckDB's default): the writer holds a whole row group
// before it compresses it. Writing a month of the benchmark's daily framework buckets (1.6 M rows) took a
// process from 120 to 360 MB of RSS at the default, to 270 MB at this size; the file is the same size.
const PART_ROW_GROUP = 30_720;

/** A part's rows as Parquet: HUGEINT as DECIMAL(38,0), which Parquet keeps exact (it would write a DOUBLE). */
function partCopySql(table: PartedTable, cols: readonly Column[], path: string): string {
  const select = cols
    .filter((c) => !(hive(table) && c.name === HIVE_COLUMN))
    .map((c) =>
      c.type === 'HUGEINT'
        ? `CAST(${quoteIdent(c.name)} AS DECIMAL(38,0)) AS ${quoteIdent(c.name)}`
        : quoteIdent(c.name),
    )
    .join(', ');
  return `COPY (SELECT ${select} FROM ${quoteIdent(table)} WHERE ${PART_FILTER[PARTED_TABLES[table]]}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${PART_ROW_GROUP})`;
}

/** The copy's view of a parted table: its part files, each column cast back to the table's type. */
function partViewSql(table: PartedTable, cols: readonly Column[], files: readonly string[]): string {
  const select = cols.map((c) => `CAST(${quoteIdent(c.name)} AS ${c.type}) AS ${quoteIdent(c.name)}`).join(', ');
  const options = hive(table) ? `, hive_partitioning = true, hive_types = {'${HIVE_COLUMN}': VARCHAR}` : '';
  return `CREATE VIEW ${ATTACHED}.main.${quoteIdent(table)} AS SELECT ${select} FROM read_parquet([${files.map(quoteLiteral).join(', ')}]${options})`;
}

interface Catalog {
  database: string;
  tables: string[];
  columns: Map<string, Column[]>;
}

async function readCatalog(sql: RawSql): Promise<Catalog> {
  const [{ name } = { name: '' }] = await sql.query<{ name: string }>(DATABASE_SQL);
  const tables = (await sql.query<{ table_name: string }>(TABLES_SQL)).map((r) => r.table_name);
  const columns = new Map<string, Column[]>();
  for (const r of await sql.query<{ table_name: string; column_name: string; data_type: string }>(COLUMNS_SQL)) {
    const list = columns.get(r.table_name) ?? [];
    list.push({ name: r.column_name, type: r.data_type });
    columns.set(r.table_name, list);
  }
  return { database: name, tables, columns };
}

type PartKey = { table: PartedTable; part: string };

/** How long after a UTC month's end its hourly days stay parts of their own: the API serves hourly data
 *  for 168 hours (LOOKBACK_MS), so a month whose end is that long before the newest hourly day collected
 *  is never written again by a collect; a day more for margin. */
const HOURLY_SEAL_MS = LOOKBACK_MS.hourly + 86_400_000;
const HOURLY_DAY = /^hourly\/(\d{4}-\d{2})-\d{2}$/;
const HOURLY_MONTH = /^hourly\/(\d{4}-\d{2})$/;
const monthEnd = (month: string) => {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return Date.UTC(y, m, 1);
};

/** The hourly months of each bucket table kept as one part (a sealed month), with at most one more month
 *  sealed now per table: its day parts are dropped and its month part written. A publish writes at most a
 *  month of hourly rows more than its runs changed, and the copy's views name a file per month, not per day,
 *  for all but the last weeks: a view's binding and a query's file opening grow with its files. */
function sealHourlyMonths(published: readonly PartKey[], dirty: readonly PartKey[], seal: boolean) {
  const days = [...published, ...dirty].flatMap((p) => (HOURLY_DAY.test(p.part) ? [p.part.slice(7)] : []));
  const newest = days.length > 0 ? Date.parse(`${days.sort().at(-1)}T00:00:00Z`) : -Infinity;
  const sealed = new Map<PartedTable, Set<string>>();
  const drop: PartKey[] = [];
  for (const table of PARTED_TABLE_NAMES.filter(hive)) {
    const mine = published.filter((p) => p.table === table);
    const months = new Set(mine.flatMap((p) => HOURLY_MONTH.exec(p.part)?.[1] ?? []));
    const next = mine
      .flatMap((p) => HOURLY_DAY.exec(p.part)?.[1] ?? [])
      .filter((m) => !months.has(m) && monthEnd(m) + HOURLY_SEAL_MS <= newest)
      .sort()[0];
    if (seal && next !== undefined) {
      months.add(next);
      drop.push(...mine.filter((p) => HOURLY_DAY.exec(p.part)?.[1] === next).map((p) => ({ table, part: p.part })));
    }
    sealed.set(table, months);
  }
  const partOf = (table: PartedTable, part: string) => {
    const month = HOURLY_DAY.exec(part)?.[1];
    return month !== undefined && sealed.get(table)?.has(month) ? `hourly/${month}` : part;
  };
  return { drop, partOf };
}

interface PartPlan {
  /** The parts to write. */
  write: PartKey[];
  /** The recorded parts now held by a sealed month's part. */
  drop: PartKey[];
}

/** The parts to write: those marked, every part of a table marked whole or whose columns changed, any
 *  recorded part whose file is gone, and a month of hourly days sealed (sealHourlyMonths). */
async function planParts(sql: RawSql, cat: Catalog, dir: string, seal: boolean): Promise<PartPlan> {
  const present = cat.tables.filter(isParted);
  const published = (await sql.query<{ table_name: string; part: string; file: string }>(PARTS_SQL)).map((r) => ({
    table: r.table_name as PartedTable,
    part: r.part,
    file: r.file,
  }));
  const signatures = new Map(
    (await sql.query<{ table_name: string; columns: string }>(SIGNATURES_SQL)).map((r) => [r.table_name, r.columns]),
  );
  const dirty = (await sql.query<{ table_name: string; part: string }>(DIRTY_SQL)).map((r) => ({
    table: r.table_name as PartedTable,
    part: r.part,
  }));
  const { drop, partOf } = sealHourlyMonths(published, dirty, seal);
  const keys = new Map<PartedTable, Set<string>>(present.map((t) => [t, new Set()]));
  const add = (table: PartedTable, part: string) => keys.get(table)?.add(partOf(table, part));
  for (const t of present) {
    const whole =
      signatures.get(t) !== signature(cat.columns.get(t) ?? []) || dirty.some((d) => d.table === t && d.part === '*');
    if (!whole) continue;
    const now = await sql.query<{ part: string }>(
      `SELECT DISTINCT ${PART_LIST[PARTED_TABLES[t]]} AS part FROM ${quoteIdent(t)}`,
    );
    for (const r of now) add(t, r.part);
    for (const p of published) if (p.table === t) add(t, p.part);
  }
  for (const d of [...dirty, ...drop]) if (d.part !== '*') add(d.table, d.part);
  for (const p of published) if (!existsSync(join(dir, p.file))) add(p.table, p.part);
  const write = [...keys].flatMap(([table, parts]) => [...parts].sort().map((part) => ({ table, part })));
  return { write, drop };
}

/** Writes one part under a new name; a part with no rows gets no file. */
type WrittenPart = PartKey & { file: string | null; rows: bigint };

async function writePart(
  sql: RawSql,
  dir: string,
  gen: string,
  cols: readonly Column[],
  k: PartKey,
): Promise<WrittenPart> {
  const file = partFile(k, gen);
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  const [r] = await sql.query<{ Count: bigint }>(
    partCopySql(k.table, cols, join(dir, file)),
    partParams(k.table, k.part),
  );
  const rows = BigInt(r?.Count ?? 0);
  if (rows === 0n) {
    rmSync(join(dir, file), { force: true });
    return { ...k, file: null, rows };
  }
  fsyncPath(join(dir, file));
  return { ...k, file, rows };
}

/** The copy at `tmp`: the schema, every table not parted (or parted with no part) whole, the parted ones as views. */
async function buildCopy(sql: RawSql, cat: Catalog, tmp: string, dir: string): Promise<void> {
  const parts = await sql.query<{ table_name: string; part: string; file: string }>(PARTS_SQL);
  await sql.run(`ATTACH ${quoteLiteral(tmp)} AS ${ATTACHED} (STORAGE_VERSION '${ANALYST_STORAGE_VERSION}')`);
  try {
    await sql.run(`COPY FROM DATABASE ${quoteIdent(cat.database)} TO ${ATTACHED} (SCHEMA)`);
    for (const t of cat.tables) {
      const files = parts.filter((p) => p.table_name === t).map((p) => resolve(dir, p.file));
      if (isParted(t) && files.length > 0) {
        await sql.run(`DROP TABLE ${ATTACHED}.main.${quoteIdent(t)}`);
        await sql.run(partViewSql(t, cat.columns.get(t) ?? [], files));
      } else if (!isParted(t)) {
        await sql.run(
          `INSERT INTO ${ATTACHED}.main.${quoteIdent(t)} SELECT * FROM ${quoteIdent(cat.database)}.main.${quoteIdent(t)}`,
        );
      }
    }
  } finally {
    await sql.run(`DETACH ${ATTACHED}`);
  }
}

/** Writes the marked parts and records them with the marks cleared, in one transaction; returns the count. */
async function refreshParts(store: Store, cat: Catalog, dir: string, seal: boolean): Promise<number> {
  const sql = rawSql(store);
  const plan = await planParts(sql, cat, dir, seal);
  const gen = `${Date.now().toString(36)}-${process.pid}`;
  const written: WrittenPart[] = [];
  for (const k of plan.write) written.push(await writePart(sql, dir, gen, cat.columns.get(k.table) ?? [], k));
  await store.transaction(async () => {
    for (const d of plan.drop) {
      await sql.run(PART_RETIRE_SQL, { table_name: d.table, part: d.part });
      await sql.run(PART_FORGET_SQL, { table_name: d.table, part: d.part });
    }
    for (const w of written) {
      await sql.run(PART_RETIRE_SQL, { table_name: w.table, part: w.part });
      await sql.run(PART_FORGET_SQL, { table_name: w.table, part: w.part });
      if (w.file !== null)
        await sql.run(PART_RECORD_SQL, { table_name: w.table, part: w.part, file: w.file, rows: w.rows });
    }
    await sql.run(DIRTY_CLEAR_SQL);
    for (const t of cat.tables.filter(isParted))
      await sql.run(SIGNATURE_SET_SQL, { table_name: t, columns: signature(cat.columns.get(t) ?? []) });
  });
  return written.length;
}

/** Removes `<copy>.tmp-PID` files (and their WAL) of this process or of processes no longer running. */
function removeStaleCopies(target: string): void {
  const prefix = `${basename(target)}.tmp-`;
  for (const name of readdirSync(dirname(target))) {
    const pid = name.startsWith(prefix) ? Number(/^(\d+)(\.wal)?$/.exec(name.slice(prefix.length))?.[1]) : NaN;
    if (Number.isInteger(pid) && (pid === process.pid || !pidAlive(pid)))
      rmSync(join(dirname(target), name), { force: true });
  }
}

/** After a copy is in place: replaced files start their grace, expired ones go, and so do files no record
 *  names (written by a publish that died before recording them). */
async function sweepParts(sql: RawSql, dir: string, now: Date, graceMs: number): Promise<void> {
  await sql.run(RETIRED_STAMP_SQL, { now });
  const expired = (
    await sql.query<{ file: string }>(RETIRED_EXPIRED_SQL, { cutoff: new Date(now.getTime() - graceMs) })
  ).map((r) => r.file);
  for (const f of expired) rmSync(join(dir, f), { force: true });
  if (expired.length > 0) await sql.run(RETIRED_DROP_SQL, { files: expired });
  const known = new Set((await sql.query<{ file: string }>(KNOWN_FILES_SQL)).map((r) => r.file));
  if (!existsSync(dir)) return;
  for (const t of readdirSync(dir))
    if (isParted(t))
      for (const f of readdirSync(join(dir, t), { recursive: true, encoding: 'utf8' }))
        if (f.endsWith('.parquet') && !known.has(`${t}/${f}`)) rmSync(join(dir, t, f), { force: true });
}

export interface PublishOptions {
  target?: string;
  log?: Logger;
  /** How long a replaced part file is kept (RETIRED_GRACE_MS). */
  retiredGraceMs?: number;
  /** Whether this publish may seal an hourly month (sealHourlyMonths; default true): a month sealed writes
   *  its hourly rows once more, which a run collecting hours alone leaves to the next daily run. */
  sealMonth?: boolean;
}

/** Publishes the analyst copy (and the parts it reads); returns its path. The store stays open throughout. */
export async function publishAnalystCopy(store: Store, opts: PublishOptions = {}): Promise<string> {
  const target = resolve(opts.target ?? analystCopyPath(store.path));
  if (target === resolve(store.path)) throw new Error('the analyst copy cannot replace the database itself');
  const dir = analystPartsDir(target);
  const tmp = `${target}.tmp-${process.pid}`;
  removeStaleCopies(target); // left by runs that died while publishing
  const sql = rawSql(store);
  let parts = 0;
  const limit =
    memoryBytes(PUBLISH_MEMORY_LIMIT) < memoryBytes(store.memoryLimit) ? PUBLISH_MEMORY_LIMIT : store.memoryLimit;
  const removeTmp = () => {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  };
  // Run again from the start after running out at the lower limit: parts are recorded only once all are written.
  await store
    .atMemoryLimit(limit, () =>
      store.exclusive(async () => {
        removeTmp();
        const cat = await readCatalog(sql);
        parts = await refreshParts(store, cat, dir, opts.sealMonth ?? true);
        await buildCopy(sql, cat, tmp, dir);
      }),
    )
    .catch((err: unknown) => {
      removeTmp();
      throw err;
    });
  if (existsSync(`${tmp}.wal`)) throw new Error(`the analyst copy ${tmp} still had a WAL after it was closed`);
  fsyncPath(tmp);
  if (existsSync(`${target}.wal`)) {
    // Someone opened the previous copy read-write and changed it. That WAL belongs to the old file;
    // it is theirs to close, but a session opened on the new copy before they do would see it.
    opts.log?.warn('the analyst copy is open read-write somewhere; analysts should open it read-only', {
      wal: `${target}.wal`,
    });
  }
  renameSync(tmp, target);
  fsyncPath(dirname(target));
  await sweepParts(sql, dir, new Date(), opts.retiredGraceMs ?? RETIRED_GRACE_MS);
  opts.log?.debug('analyst copy published', { target, parts_written: parts });
  return target;
}

const SOURCE = 'analyst_source';
const SOURCE_VERSION_SQL = `SELECT max(version) AS v FROM ${SOURCE}.main.schema_migrations`;
const SOURCE_RELATIONS_SQL = `SELECT table_name AS name FROM duckdb_tables() WHERE database_name = '${SOURCE}'
UNION SELECT view_name FROM duckdb_views() WHERE database_name = '${SOURCE}' AND NOT internal`;

/**
 * A database rebuilt from an analyst copy and its parts, at `target` (which must not exist): what the
 * collector's database held when the copy was published. Written aside and renamed into place.
 */
export async function restoreFromAnalystCopy(copy: string, target: string): Promise<{ tables: number }> {
  const tmp = `${target}.restore-${process.pid}`;
  for (const f of [tmp, `${tmp}.wal`]) rmSync(f, { force: true });
  const store = await openStore({ path: tmp });
  let tables = 0;
  try {
    const sql = rawSql(store);
    await sql.run(`ATTACH ${quoteLiteral(resolve(copy))} AS ${SOURCE} (READ_ONLY)`);
    const [{ v } = { v: null }] = await sql.query<{ v: number | null }>(SOURCE_VERSION_SQL);
    const version = await store.schemaVersion();
    if (v !== version)
      throw new Error(
        `the analyst copy ${copy} has schema version ${v ?? 'none'}, this usage-pipeline ${version}: restore it with the release that published it`,
      );
    const names = new Set((await sql.query<{ name: string }>(SOURCE_RELATIONS_SQL)).map((r) => r.name));
    const cat = await readCatalog(sql);
    await store.transaction(async () => {
      for (const t of [...names].filter((n) => cat.tables.includes(n) || isParted(n))) {
        const source = `${SOURCE}.main.${quoteIdent(t)}`;
        if (cat.tables.includes(t)) {
          await sql.run(`DELETE FROM ${quoteIdent(t)}`);
          await sql.run(`INSERT INTO ${quoteIdent(t)} SELECT * FROM ${source}`);
        } else await sql.run(`CREATE TABLE ${quoteIdent(t)} AS SELECT * FROM ${source}`);
        tables++;
      }
    });
    await sql.run(`DETACH ${SOURCE}`);
  } catch (err) {
    await store.close();
    for (const f of [tmp, `${tmp}.wal`]) rmSync(f, { force: true });
    throw err;
  }
  await store.close();
  if (existsSync(`${tmp}.wal`)) throw new Error(`the restored database ${tmp} still had a WAL after it was closed`);
  fsyncPath(tmp);
  if (existsSync(target))
    throw new Error(`${target} appeared while restoring; the restored database is left at ${tmp}`);
  renameSync(tmp, target);
  fsyncPath(dirname(target));
  return { tables };
}
