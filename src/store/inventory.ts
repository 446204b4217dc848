// Inventory upserts into the dimension tables (programs, frameworks, snapshots). Rows are staged through
// the appender into a TEMP table, then merged in one transaction: rows listed now are inserted or
// refreshed (last_seen_at, deleted_at cleared); for a complete listing, rows of that scope that were
// not listed get deleted_at. Rows are never deleted: deleted items are still billed.
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { execSql } from './connection.js';
import { readSql } from './sql.js';
import type { FrameworkRow, ProgramRow, SnapshotRow } from './types.js';
import { timestampTZ } from './values.js';

// Parameters: $seen_at TIMESTAMPTZ, $program_ids VARCHAR[] (programs whose framework listing was
// complete).
const FRAMEWORKS_MARK_DELETED_SQL = `
UPDATE frameworks
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE program_id IN (SELECT unnest($program_ids))
  AND deleted_at IS NULL
  AND framework_id NOT IN (SELECT framework_id FROM staging_frameworks);`;

// Parameters: $seen_at TIMESTAMPTZ, $org_ids VARCHAR[] (organizations whose listing was complete). A
// program of those organizations that the listing no longer returned keeps its row, marked deleted as
// of the first listing that missed it.
const PROGRAMS_MARK_DELETED_SQL = `
UPDATE programs
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE org_id IN (SELECT unnest($org_ids))
  AND deleted_at IS NULL
  AND program_id NOT IN (SELECT program_id FROM staging_programs);`;

// Parameters: $seen_at TIMESTAMPTZ, $program_ids VARCHAR[] (programs whose snapshot listing was
// complete).
const SNAPSHOTS_MARK_DELETED_SQL = `
UPDATE snapshots
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE program_id IN (SELECT unnest($program_ids))
  AND deleted_at IS NULL
  AND snapshot_id NOT IN (SELECT snapshot_id FROM staging_snapshots);`;

// Parameters: none. Drops the inventory staging tables of this connection, if any.
const STAGING_INVENTORY_DROP_SQL = `
DROP TABLE IF EXISTS temp.main.staging_programs;
DROP TABLE IF EXISTS temp.main.staging_frameworks;
DROP TABLE IF EXISTS temp.main.staging_snapshots;`;

function appendText(a: DuckDBAppender, v: string | null | undefined): void {
  if (v === null || v === undefined) a.appendNull();
  else a.appendVarchar(v);
}

function appendTime(a: DuckDBAppender, v: Date | null | undefined): void {
  if (v === null || v === undefined) a.appendNull();
  else a.appendTimestampTZ(timestampTZ(v));
}

interface InventoryKind<R> {
  what: string;
  /** The .sql files creating the staging table and merging it (long, so files beside this module). */
  stagingFile: string;
  upsertFile: string;
  /** The statement marking unlisted rows deleted. */
  markSql: string;
  /** Parameter name of the completeness list in markSql. */
  scopeParam: string;
  columns: number;
  appendRow(a: DuckDBAppender, r: R): void;
}

export const PROGRAMS: InventoryKind<ProgramRow> = {
  what: 'programs',
  stagingFile: 'src/store/sql/staging_programs_create.sql',
  upsertFile: 'src/store/sql/programs_upsert_staged.sql',
  markSql: PROGRAMS_MARK_DELETED_SQL,
  scopeParam: 'org_ids',
  columns: 5,
  appendRow(a, r) {
    a.appendVarchar(r.program_id);
    appendText(a, r.org_id);
    appendText(a, r.name);
    appendText(a, r.region_id);
    appendTime(a, r.created_at);
  },
};

export const FRAMEWORKS: InventoryKind<FrameworkRow> = {
  what: 'frameworks',
  stagingFile: 'src/store/sql/staging_frameworks_create.sql',
  upsertFile: 'src/store/sql/frameworks_upsert_staged.sql',
  markSql: FRAMEWORKS_MARK_DELETED_SQL,
  scopeParam: 'program_ids',
  columns: 5,
  appendRow(a, r) {
    a.appendVarchar(r.framework_id);
    a.appendVarchar(r.program_id);
    appendText(a, r.name);
    appendText(a, r.current_state);
    appendTime(a, r.created_at);
  },
};

export const SNAPSHOTS: InventoryKind<SnapshotRow> = {
  what: 'snapshots',
  stagingFile: 'src/store/sql/staging_snapshots_create.sql',
  upsertFile: 'src/store/sql/snapshots_upsert_staged.sql',
  markSql: SNAPSHOTS_MARK_DELETED_SQL,
  scopeParam: 'program_ids',
  columns: 7,
  appendRow(a, r) {
    a.appendVarchar(r.snapshot_id);
    a.appendVarchar(r.program_id);
    appendText(a, r.name);
    appendText(a, r.source_framework_id);
    appendTime(a, r.created_at);
    if (r.manual === null || r.manual === undefined) a.appendNull();
    else a.appendBoolean(r.manual);
    appendTime(a, r.expires_at);
  },
};

/**
 * Stages and merges one listing. Must run inside the store's exclusive section, outside a transaction
 * (it opens its own); the staging table is TEMP and dropped afterwards.
 */
export async function upsertInventory<R>(
  conn: DuckDBConnection,
  kind: InventoryKind<R>,
  rows: readonly R[],
  seenAt: Date,
  completeFor: readonly string[] | undefined,
  transaction: <T>(fn: () => Promise<T>) => Promise<T>,
): Promise<void> {
  await execSql(conn, readSql(kind.stagingFile));
  try {
    if (rows.length > 0) {
      const stagingTable = `staging_${kind.what}`;
      const a = await conn.createAppender(stagingTable, 'main', 'temp');
      try {
        if (a.columnCount !== kind.columns + 1)
          throw new Error(`${stagingTable} does not have the columns the appender writes`);
        let seq = 0n;
        for (const r of rows) {
          a.appendBigInt(seq++);
          kind.appendRow(a, r);
          a.endRow();
        }
        a.closeSync(); // flushes
      } catch (err) {
        try {
          a.closeSync();
        } catch {
          // A half-appended row: the staging table is dropped below anyway.
        }
        throw err;
      }
    }
    await transaction(async () => {
      if (rows.length > 0) await execSql(conn, readSql(kind.upsertFile), { seen_at: seenAt });
      if (completeFor !== undefined && completeFor.length > 0) {
        await execSql(conn, kind.markSql, { seen_at: seenAt, [kind.scopeParam]: [...completeFor] });
      }
    });
  } finally {
    await execSql(conn, STAGING_INVENTORY_DROP_SQL).catch(() => {
      // a TEMP table: it goes with the connection if the drop fails
    });
  }
}
