// Migration 010 on a file written with the earlier schema (migrations 001-008: long usage tables):
// every value, key and run column comes back through the views exactly as it was stored.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listMigrations } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';

// The schema the last release wrote (001-008); a file at 009 (the report's stages) upgrades the same way.
const OLD = () => listMigrations().filter((m) => m.version < 9);
const BEFORE_010 = () => listMigrations().filter((m) => m.version < 10);

// Rows as the earlier release stored them: v1 and v2, values beyond 2^53 and at 2^63-1, a bucket in two
// periods (a plan change), an open and a closed period, an org left NULL, an explicit 0 kept by append().
const PROGRAM_ROWS = `
INSERT INTO usage_program VALUES
 ('v2','hourly','org-1','p1','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 10:00:00+00','2026-11-20 11:00:00+00','compute_unit_seconds',9007199254740993,'r1','2026-11-20 12:00:00+00'),
 ('v2','hourly','org-1','p1','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 10:00:00+00','2026-11-20 11:00:00+00','public_network_transfer_bytes',9223372036854775807,'r1','2026-11-20 12:00:00+00'),
 ('v2','hourly','org-1','p1','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 11:00:00+00','2026-11-20 12:00:00+00','root_branch_bytes_month',0,'r1','2026-11-20 12:00:00+00'),
 ('v2','daily','org-1','p2','per-a','launch','2026-10-01 00:00:00+00','2026-10-15 12:00:00+00','2026-10-15 00:00:00+00','2026-10-16 00:00:00+00','compute_unit_seconds',100,'r2','2026-10-17 00:00:00+00'),
 ('v2','daily','org-1','p2','per-b','scale','2026-10-15 12:00:00+00',NULL,'2026-10-15 00:00:00+00','2026-10-16 00:00:00+00','compute_unit_seconds',200,'r2','2026-10-17 00:00:00+00'),
 ('v2','daily','org-1','p2','per-b','scale','2026-10-15 12:00:00+00',NULL,'2026-10-15 00:00:00+00','2026-10-16 00:00:00+00','extra_branches_month',7,'r2','2026-10-17 00:00:00+00'),
 ('v1','monthly',NULL,'p9','per-9','legacy','2024-01-01 00:00:00+00',NULL,'2026-10-01 00:00:00+00','2026-11-01 00:00:00+00','synthetic_storage_size_bytes',123456789012345678,'r3','2026-11-02 00:00:00+00'),
 ('v1','monthly',NULL,'p9','per-9','legacy','2024-01-01 00:00:00+00',NULL,'2026-10-01 00:00:00+00','2026-11-01 00:00:00+00','logical_size_bytes_hour',5,'r3','2026-11-02 00:00:00+00');`;
const FRAMEWORK_ROWS = `
INSERT INTO usage_framework VALUES
 ('hourly','org-1','p1','br-1','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 10:00:00+00','2026-11-20 11:00:00+00','compute_unit_seconds',9007199254740993,'r1','2026-11-20 12:00:00+00'),
 ('hourly','org-1','p1','br-1','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 10:00:00+00','2026-11-20 11:00:00+00','private_network_transfer_bytes',3,'r1','2026-11-20 12:00:00+00'),
 ('hourly','org-1','p1','br-2','per-1','launch','2026-10-01 00:00:00+00',NULL,'2026-11-20 10:00:00+00','2026-11-20 11:00:00+00','child_branch_bytes_month',4,'r1','2026-11-20 12:00:00+00'),
 ('daily','org-1','p2','br-3','per-a','launch','2026-10-01 00:00:00+00','2026-10-15 12:00:00+00','2026-10-15 00:00:00+00','2026-10-16 00:00:00+00','instant_restore_bytes_month',11,'r2','2026-10-17 00:00:00+00'),
 ('daily','org-1','p2','br-3','per-b','scale','2026-10-15 12:00:00+00',NULL,'2026-10-15 00:00:00+00','2026-10-16 00:00:00+00','instant_restore_bytes_month',12,'r2','2026-10-17 00:00:00+00');`;

// Every column of every row as text, so a changed type, time or value shows.
const DUMP_PROGRAM = `SELECT concat_ws('|', api_version, granularity, coalesce(org_id, '∅'), program_id, period_id, period_plan, period_start,
  coalesce(period_end::VARCHAR, '∅'), timeframe_start, timeframe_end, metric, value, run_id, collected_at) AS line FROM usage_program ORDER BY line`;
const DUMP_FRAMEWORK = `SELECT concat_ws('|', granularity, org_id, program_id, framework_id, period_id, period_plan, period_start,
  coalesce(period_end::VARCHAR, '∅'), timeframe_start, timeframe_end, metric, value, run_id, collected_at) AS line FROM usage_framework ORDER BY line`;
const DUMP_WIDE = `SELECT CAST(w AS VARCHAR) AS line FROM usage_program_wide w ORDER BY line`;
const COLUMNS = `SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE table_name IN ('usage_program', 'usage_framework') ORDER BY table_name, column_index`;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'wide-migration-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('migration 010 (usage stored by bucket)', () => {
  it('upgrades a file written with the long tables in place, keeping every value and column', async () => {
    const path = join(dir, 'old.duckdb');
    const old = await openStore({ path, migrations: OLD() });
    await rawSql(old).run(PROGRAM_ROWS);
    await rawSql(old).run(FRAMEWORK_ROWS);
    const before = {
      program: await rawSql(old).query(DUMP_PROGRAM),
      framework: await rawSql(old).query(DUMP_FRAMEWORK),
      wide: await rawSql(old).query(DUMP_WIDE),
      columns: await rawSql(old).query(COLUMNS),
    };
    await old.close();
    expect(before.program).toHaveLength(8);
    expect(before.framework).toHaveLength(5);

    const store = await openStore({ path });
    expect(await store.schemaVersion()).toBeGreaterThanOrEqual(11);
    expect(
      await rawSql(store).query(
        "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name IN ('usage_program', 'usage_framework')",
      ),
    ).toEqual([{ n: 0n }]);
    expect(await rawSql(store).query(DUMP_PROGRAM)).toEqual(before.program);
    expect(await rawSql(store).query(DUMP_FRAMEWORK)).toEqual(before.framework);
    expect(await rawSql(store).query(DUMP_WIDE)).toEqual(before.wide);
    expect(await rawSql(store).query(COLUMNS)).toEqual(before.columns);
    // A bucket in two periods is two bucket rows; a bucket's metrics are one row.
    expect((await store.usage.rowCounts()).usage_program).toBe(5);
    expect(await rawSql(store).query('SELECT count(*) AS n FROM billing_periods')).toEqual([{ n: 4n }]);
    await store.close();
  });

  it('refuses a file holding a metric it has no column for, and leaves it as it was', async () => {
    const path = join(dir, 'odd.duckdb');
    const old = await openStore({ path, migrations: OLD() });
    await rawSql(old).run(PROGRAM_ROWS);
    await rawSql(old).run(
      `INSERT INTO usage_program SELECT * REPLACE ('made_up_metric' AS metric) FROM usage_program LIMIT 1`,
    );
    const before = await rawSql(old).query(DUMP_PROGRAM);
    await old.close();

    await expect(openStore({ path })).rejects.toThrow(
      /010_wide_usage.sql failed and was rolled back: .*made_up_metric/,
    );
    // 009 (macros only) is applied; 010 is rolled back whole, so the long tables hold what they held.
    const again = await openStore({ path, migrations: BEFORE_010() });
    expect(await rawSql(again).query(DUMP_PROGRAM)).toEqual(before);
    expect(await again.schemaVersion()).toBe(9);
    await again.close();
  });
});
