// The migration runner: the numbered .sql files of queries/schema/ applied in order, each in its own transaction
// together with its row in schema_migrations, so a crash leaves a file either before or after a migration.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { silentLogger, type Logger } from '../log.js';
import { execSql, queryRows } from './connection.js';
import { packageRoot, readSql } from './sql.js';

// Parameters: none. The migrations already applied, in order.
const SCHEMA_MIGRATIONS_APPLIED_SQL = `
SELECT version, name, applied_at FROM schema_migrations ORDER BY version;`;

// Parameters: none. The migration runner's own book-keeping table (not part of any migration, so that
// the runner can read it before applying 001).
const SCHEMA_MIGRATIONS_CREATE_SQL = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       VARCHAR NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL
);`;

// Parameters: none. 1 when the database already has the runner's table (read-only opens cannot create
// it).
const SCHEMA_MIGRATIONS_EXISTS_SQL = `
SELECT count(*)::INTEGER AS n
FROM duckdb_tables()
WHERE database_name = current_database() AND schema_name = 'main' AND table_name = 'schema_migrations';`;

// Parameters: $version INTEGER, $name VARCHAR, $applied_at TIMESTAMPTZ. Runs in the same transaction as
// the migration it records.
const SCHEMA_MIGRATIONS_RECORD_SQL = `
INSERT INTO schema_migrations (version, name, applied_at) VALUES ($version, $name, $applied_at);`;

export const SCHEMA_DIR = 'queries/schema';
const MIGRATION_FILE = /^(\d+)_([A-Za-z0-9_-]+)\.sql$/;

export interface Migration {
  version: number;
  name: string;
  /** Path relative to the package root, for readSql. */
  file: string;
}

/** Thrown when the database was written by a newer release than this one. */
export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
    path: string,
  ) {
    super(
      `The database ${path} has schema version ${databaseVersion}, newer than this usage-pipeline knows ` +
        `(${knownVersion}). Upgrade usage-pipeline to a release that includes migration ${databaseVersion}; ` +
        `the file was left unchanged.`,
    );
    this.name = 'SchemaTooNewError';
  }
}

/** Migration files shipped with this release, by version. */
export function listMigrations(dir: string = SCHEMA_DIR): Migration[] {
  const out: Migration[] = [];
  for (const f of readdirSync(join(packageRoot(), dir))) {
    const m = MIGRATION_FILE.exec(f);
    if (!m) continue;
    out.push({ version: Number(m[1]), name: m[2] ?? f, file: `${dir}/${f}` });
  }
  out.sort((a, b) => a.version - b.version);
  for (let i = 1; i < out.length; i++) {
    if (out[i]?.version === out[i - 1]?.version)
      throw new Error(`two migrations share version ${out[i]?.version} in ${dir}`);
  }
  return out;
}

async function appliedVersions(conn: DuckDBConnection, create: boolean): Promise<number[]> {
  if (create) {
    await execSql(conn, SCHEMA_MIGRATIONS_CREATE_SQL);
  } else {
    const [row] = await queryRows<{ n: number }>(conn, SCHEMA_MIGRATIONS_EXISTS_SQL);
    if (!row || row.n === 0) return [];
  }
  const rows = await queryRows<{ version: number }>(conn, SCHEMA_MIGRATIONS_APPLIED_SQL);
  return rows.map((r) => r.version);
}

export interface MigrateOptions {
  path: string;
  readOnly: boolean;
  log?: Logger;
  now?: () => Date;
  /** For tests: migrations to consider instead of the shipped ones. */
  migrations?: Migration[];
}

/** Applies pending migrations (read-write) or only checks the version (read-only). Returns the schema version. */
export async function migrate(conn: DuckDBConnection, opts: MigrateOptions): Promise<number> {
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? (() => new Date());
  const known = opts.migrations ?? listMigrations();
  const knownMax = known.at(-1)?.version ?? 0;
  const applied = new Set(await appliedVersions(conn, !opts.readOnly));
  const dbMax = Math.max(0, ...applied);
  if (dbMax > knownMax) throw new SchemaTooNewError(dbMax, knownMax, opts.path);

  const pending = known.filter((m) => !applied.has(m.version));
  if (pending.length === 0) return dbMax;
  if (opts.readOnly) {
    // A read-only open cannot upgrade; the next collect will. Reading an older schema mostly works.
    log.warn('database schema is older than this release; it is upgraded by the next collect', {
      path: opts.path,
      pending: pending.map((m) => m.version),
    });
    return dbMax;
  }
  for (const m of pending) {
    await execSql(conn, 'BEGIN TRANSACTION');
    try {
      await execSql(conn, readSql(m.file));
      await execSql(conn, SCHEMA_MIGRATIONS_RECORD_SQL, {
        version: m.version,
        name: m.name,
        applied_at: now(),
      });
      await execSql(conn, 'COMMIT');
    } catch (err) {
      await execSql(conn, 'ROLLBACK').catch(() => {
        // no transaction left to roll back; the migration's error is reported below
      });
      throw new Error(`migration ${m.file} failed and was rolled back: ${(err as Error).message}`, { cause: err });
    }
    log.debug('applied schema migration', { version: m.version, name: m.name });
  }
  // One line per open, not one per migration: a new database applies them all.
  const what = dbMax === 0 ? 'created the database schema' : 'upgraded the database schema';
  log.info(`${what}: v${dbMax} -> v${knownMax} (${pending.length} migration${pending.length === 1 ? '' : 's'})`, {
    from: dbMax,
    to: knownMax,
  });
  return knownMax;
}
