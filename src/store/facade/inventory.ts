// The inventory: programs, frameworks and snapshots as listed, organizations, and the inventory's
// progress (migration 006: it commits as it goes and resumes).
import { FRAMEWORKS, PROGRAMS, SNAPSHOTS, upsertInventory } from '../inventory.js';
import { readSql } from '../sql.js';
import type { FrameworkRow, ProgramRow, SnapshotRow } from '../types.js';
import type { StoreContext } from './context.js';

// How many frameworks the inventory knows for each of the given programs: all of them (`known`, which
// bounds a frameworks request's page count) and those a window starting at $window_start could list
// (`listable`: those deleted before it are not), by which the collector sizes its frameworks requests so
// that a request's last page is not exactly full. One query per programs page serves both (a count per
// frameworks request cost a query each). Parameters: $program_ids VARCHAR[], $window_start TIMESTAMPTZ.
// Programs with none known have no row.
const INVENTORY_FRAMEWORK_COUNT_BY_PROGRAM_SQL = `
SELECT program_id, count(*) AS known, count(*) FILTER (WHERE deleted_at IS NULL OR deleted_at > $window_start) AS listable
FROM frameworks
WHERE program_id IN (SELECT unnest($program_ids::VARCHAR[]))
GROUP BY program_id;`;

// How many programs the inventory knows in one organization; the collector bounds a scope's page count
// by it. Parameters: $org_id VARCHAR.
const INVENTORY_ORG_PROGRAM_COUNT_SQL = `
SELECT count(*) AS n FROM programs WHERE org_id = $org_id;`;

// Rows in the dimension tables, for status. Parameters: none.
const DIMENSION_COUNTS_SQL = `
SELECT (SELECT count(*) FROM programs) AS programs,
       (SELECT count(*) FROM frameworks) AS frameworks,
       (SELECT count(*) FROM snapshots) AS snapshots;`;

// No parameters. Live programs the inventory knows: what a full programs listing would page through,
// against which asking for a few unknown programs by id is weighed.
const INVENTORY_PROGRAM_TOTAL_SQL = `
SELECT count(*) AS n FROM programs WHERE deleted_at IS NULL;`;

// Parameters: $program_ids VARCHAR[], $updated_ats VARCHAR[] (ISO date-times or NULL, same order). The
// updated_at each program had in the programs listing.
const INVENTORY_PROGRAM_UPDATED_SQL = `
INSERT INTO inventory_program_updated (program_id, api_updated_at)
SELECT p.id, CAST(u.at AS TIMESTAMPTZ)
FROM (SELECT unnest($program_ids) AS id, generate_subscripts($program_ids, 1) AS i) p
JOIN (SELECT unnest($updated_ats) AS at, generate_subscripts($updated_ats, 1) AS i) u USING (i)
ON CONFLICT (program_id) DO UPDATE SET api_updated_at = excluded.api_updated_at;`;

// Parameters: $program_ids VARCHAR[], $kind VARCHAR, $listed_at TIMESTAMPTZ. Those programs' listings
// of that kind were committed now, as of the updated_at the programs listing gave.
const INVENTORY_PROGRAMS_LISTED_SQL = `
INSERT INTO inventory_listing_state (program_id, kind, listed_at, listed_updated_at)
SELECT p.id, $kind, $listed_at, pu.api_updated_at
FROM (SELECT unnest($program_ids) AS id) p
LEFT JOIN inventory_program_updated pu ON pu.program_id = p.id
ON CONFLICT (program_id, kind) DO UPDATE SET listed_at = excluded.listed_at, listed_updated_at = excluded.listed_updated_at;`;

// Parameters: $kind VARCHAR ('program' | 'framework'), $ids VARCHAR[], $at TIMESTAMPTZ.
const INVENTORY_SOUGHT_ADD_SQL = `
INSERT INTO inventory_sought (kind, id, sought_at)
SELECT $kind, unnest($ids), $at
ON CONFLICT (kind, id) DO NOTHING;`;

// Parameters: $key VARCHAR. One value of the inventory's progress (no row: not set).
const INVENTORY_STATE_GET_SQL = `
SELECT value FROM inventory_state WHERE key = $key;`;

// Parameters: $key VARCHAR, $value VARCHAR (NULL clears it).
const INVENTORY_STATE_SET_SQL = `
INSERT INTO inventory_state (key, value) VALUES ($key, $value)
ON CONFLICT (key) DO UPDATE SET value = excluded.value;`;

// Parameters: $program_ids VARCHAR[]. Frameworks of these programs that consumption named and the
// listing just made still does not: recorded as looked for, so they do not trigger another listing.
const INVENTORY_UNNAMED_FRAMEWORKS_SQL = `
SELECT DISTINCT u.framework_id
FROM usage_framework u
LEFT JOIN frameworks f USING (framework_id)
WHERE u.program_id IN (SELECT unnest($program_ids)) AND f.framework_id IS NULL;`;

// (the organization listing of a collection) Parameters: $org_id VARCHAR, $name VARCHAR (NULL when the
// listing gave none), $seen_at TIMESTAMPTZ.
const ORGANIZATIONS_UPSERT_SQL = `
INSERT INTO organizations (org_id, name, last_seen_at) VALUES ($org_id, $name, $seen_at)
ON CONFLICT (org_id) DO UPDATE SET name = coalesce(excluded.name, organizations.name), last_seen_at = excluded.last_seen_at;`;

// Parameters: $seen_at TIMESTAMPTZ (start of the completed listing), $org_ids VARCHAR[]. After a
// programs listing paged to its end (possibly over several runs), a program of those organizations it
// did not return keeps its row, marked deleted as of that listing.
const PROGRAMS_MARK_UNSEEN_SQL = `
UPDATE programs
SET deleted_at = coalesce(deleted_at, $seen_at)
WHERE org_id IN (SELECT unnest($org_ids))
  AND deleted_at IS NULL
  AND last_seen_at < $seen_at;`;

/** One batch of per-program listings: the programs whose frameworks and snapshots were listed, and the rows. */
export interface ListingsBatch {
  frameworksOf: string[];
  frameworks: FrameworkRow[];
  snapshotsOf: string[];
  snapshots: SnapshotRow[];
  listedAt: Date;
}

/** The inventory and its progress (Store.inventory). */
export class Inventory {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** Programs as listed; with completeForOrgs, those organizations' programs not in rows are marked deleted. */
  async upsertPrograms(rows: ProgramRow[], o: { seenAt: Date; completeForOrgs?: string[] }): Promise<void> {
    await this.cx.exclusive(() =>
      upsertInventory(this.cx.conn, PROGRAMS, rows, o.seenAt, o.completeForOrgs, (fn) => this.cx.transaction(fn)),
    );
  }

  /** Each program's frameworks the inventory knows, all of them and those a window starting at windowStart could
   *  list (the collector bounds a frameworks request's pages by the first, sizes its requests by the second with
   *  the usage's count, Usage.frameworksByProgram; collect/frameworkBatches.ts). */
  async frameworkCountsByProgram(
    programIds: string[],
    windowStart: Date,
  ): Promise<Map<string, { known: number; listable: number }>> {
    const rows = await this.cx.sql.query<{ program_id: string; known: bigint; listable: bigint }>(
      INVENTORY_FRAMEWORK_COUNT_BY_PROGRAM_SQL,
      {
        program_ids: programIds,
        window_start: windowStart,
      },
    );
    return new Map(rows.map((r) => [r.program_id, { known: Number(r.known), listable: Number(r.listable) }]));
  }

  /** Rows in the dimension tables, for `status`. */
  async counts(): Promise<{ programs: number; frameworks: number; snapshots: number }> {
    const [row] = await this.cx.sql.query<Record<string, bigint | number>>(DIMENSION_COUNTS_SQL);
    const n = (k: string) => Number(row?.[k] ?? 0);
    return { programs: n('programs'), frameworks: n('frameworks'), snapshots: n('snapshots') };
  }

  /** One value of the inventory's progress (null: not set). */
  async state(key: string): Promise<string | null> {
    const [row] = await this.cx.sql.query<{ value: string | null }>(INVENTORY_STATE_GET_SQL, { key });
    return row?.value ?? null;
  }

  /** Sets one value of the inventory's progress (null clears it). */
  async setState(key: string, value: string | null): Promise<void> {
    await this.cx.sql.run(INVENTORY_STATE_SET_SQL, { key, value });
  }

  /** One page of the programs listing: the programs (not marking anything deleted) and their updated_at. */
  async recordProgramsPage(
    rows: (ProgramRow & { updated_at: Date | null })[],
    o: { seenAt: Date; cursorKey?: string; cursor?: string | null },
  ): Promise<void> {
    await this.upsertPrograms(rows, { seenAt: o.seenAt });
    await this.cx.transaction(async () => {
      if (rows.length > 0) {
        await this.cx.exec(INVENTORY_PROGRAM_UPDATED_SQL, {
          program_ids: rows.map((r) => r.program_id),
          updated_ats: rows.map((r) => (r.updated_at ? r.updated_at.toISOString() : null)),
        });
      }
      if (o.cursorKey !== undefined)
        await this.cx.exec(INVENTORY_STATE_SET_SQL, { key: o.cursorKey, value: o.cursor ?? null });
    });
  }

  /** The programs listing reached its end: programs of these organizations it did not return are marked deleted. */
  async markProgramsUnseen(orgIds: string[], listingStartedAt: Date): Promise<void> {
    if (orgIds.length === 0) return;
    await this.cx.sql.run(PROGRAMS_MARK_UNSEEN_SQL, { seen_at: listingStartedAt, org_ids: orgIds });
  }

  /** Live programs' listings (frameworks, snapshots) worth a request, most useful first. */
  async listingsDue(o: {
    staleBefore: Date;
    orgIds: string[];
    runId: string;
    force: boolean;
  }): Promise<{ programId: string; kind: 'frameworks' | 'snapshots'; reason: number }[]> {
    const rows = await this.cx.sql.query<{ program_id: string; kind: 'frameworks' | 'snapshots'; reason: number }>(
      readSql('src/store/sql/inventory_programs_due.sql'),
      {
        stale_before: o.staleBefore,
        org_ids: o.orgIds,
        run_id: o.runId,
        force: o.force,
      },
    );
    return rows.map((r) => ({ programId: r.program_id, kind: r.kind, reason: Number(r.reason) }));
  }

  /** Programs the inventory knows (live or deleted): what a full programs listing would page through. */
  async programTotal(): Promise<number> {
    const [row] = await this.cx.sql.query<{ n: bigint | number }>(INVENTORY_PROGRAM_TOTAL_SQL);
    return Number(row?.n ?? 0);
  }

  /** Programs the inventory knows in one organization (the collector bounds a scope's pages by it). */
  async programCount(orgId: string): Promise<number> {
    const [row] = await this.cx.sql.query<{ n: bigint | number }>(INVENTORY_ORG_PROGRAM_COUNT_SQL, { org_id: orgId });
    return Number(row?.n ?? 0);
  }

  /** An organization from the organization listing; a null name keeps the one already known. */
  async upsertOrganization(o: { orgId: string; name: string | null; seenAt: Date }): Promise<void> {
    await this.cx.sql.run(ORGANIZATIONS_UPSERT_SQL, { org_id: o.orgId, name: o.name, seen_at: o.seenAt });
  }

  /** Programs the run's usage named that the inventory does not know. */
  async unknownProgramsInRun(runId: string): Promise<string[]> {
    const rows = await this.cx.sql.query<{ program_id: string }>(
      readSql('src/store/sql/inventory_unknown_programs.sql'),
      { run_id: runId },
    );
    return rows.map((r) => r.program_id);
  }

  /** Ids looked for by id, so they do not trigger another listing. */
  async markSought(kind: 'program' | 'framework', ids: string[], at: Date): Promise<void> {
    if (ids.length === 0) return;
    await this.cx.sql.run(INVENTORY_SOUGHT_ADD_SQL, { kind, ids, at });
  }

  /** One batch of listings, each kind committed with its listing state (a listing not in the batch stays due). */
  async recordListings(o: ListingsBatch): Promise<void> {
    if (o.frameworksOf.length > 0) {
      await this.upsertFrameworks(o.frameworks, { seenAt: o.listedAt, completeForPrograms: o.frameworksOf });
      const unnamed = await this.cx.sql.query<{ framework_id: string }>(INVENTORY_UNNAMED_FRAMEWORKS_SQL, {
        program_ids: o.frameworksOf,
      });
      await this.cx.transaction(async () => {
        await this.cx.exec(INVENTORY_PROGRAMS_LISTED_SQL, {
          program_ids: o.frameworksOf,
          kind: 'frameworks',
          listed_at: o.listedAt,
        });
        if (unnamed.length > 0) {
          await this.cx.exec(INVENTORY_SOUGHT_ADD_SQL, {
            kind: 'framework',
            ids: unnamed.map((r) => r.framework_id),
            at: o.listedAt,
          });
        }
      });
    }
    if (o.snapshotsOf.length > 0) {
      await this.upsertSnapshots(o.snapshots, { seenAt: o.listedAt, completeForPrograms: o.snapshotsOf });
      await this.cx.sql.run(INVENTORY_PROGRAMS_LISTED_SQL, {
        program_ids: o.snapshotsOf,
        kind: 'snapshots',
        listed_at: o.listedAt,
      });
    }
  }

  /** Frameworks as listed; with completeForPrograms, those programs' frameworks not in rows are marked deleted. */
  async upsertFrameworks(rows: FrameworkRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    await this.cx.exclusive(() =>
      upsertInventory(this.cx.conn, FRAMEWORKS, rows, o.seenAt, o.completeForPrograms, (fn) => this.cx.transaction(fn)),
    );
  }

  /** Snapshots as listed; with completeForPrograms, those programs' snapshots not in rows are marked deleted. */
  async upsertSnapshots(rows: SnapshotRow[], o: { seenAt: Date; completeForPrograms?: string[] }): Promise<void> {
    await this.cx.exclusive(() =>
      upsertInventory(this.cx.conn, SNAPSHOTS, rows, o.seenAt, o.completeForPrograms, (fn) => this.cx.transaction(fn)),
    );
  }
}
