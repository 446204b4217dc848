import { describe, expect, it } from 'vitest';
import { listMigrations, SchemaTooNewError } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/store.js';
import { useTempDbPath } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

/** A log level the test does not look at. */
function quiet(): void {
  // dropped
}

const dbPath = useTempDbPath();

const fixtures = listMigrations('test/store/fixtures/schema');
const shipped = listMigrations();

describe('migrations', () => {
  it('lists the shipped migrations in order, starting with 001_init', () => {
    expect(shipped[0]).toEqual({ version: 1, name: 'init', file: 'queries/schema/001_init.sql' });
    expect(fixtures.map((m) => m.version)).toEqual([900, 901]);
    expect(shipped.at(-1)!.version).toBeLessThan(900);
  });

  it('applies 001 once to a new file; re-opening is a no-op', async () => {
    let store = await openStore({ path: dbPath(), now: () => new Date('2025-01-01T00:00:00Z') });
    expect(await store.schemaVersion()).toBe(shipped.at(-1)!.version);
    const tables = await rawSql(store).query<{ t: string }>(
      'SELECT table_name AS t FROM duckdb_tables() WHERE database_name = current_database() ORDER BY t',
    );
    expect(tables.map((r) => r.t)).toEqual([
      'alert_acks',
      'alert_deliveries',
      'alert_priced_days',
      'alert_priced_runs',
      'alert_priced_state',
      'alert_program_days',
      'alerts',
      'analyst_dirty',
      'analyst_parts',
      'analyst_retired',
      'analyst_tables',
      'billing_periods',
      'collection_runs',
      'coverage',
      'coverage_by_scope',
      'export_datasets',
      'export_partitions',
      'export_runs',
      'frameworks',
      'inventory_listing_state',
      'inventory_program_updated',
      'inventory_sought',
      'inventory_state',
      'org_spending_limits',
      'organizations',
      'price_allowances',
      'price_book',
      'price_metrics',
      'price_rates',
      'programs',
      'report_finalizations',
      'report_finalized_files',
      'report_finalized_lines',
      'report_focus_finalized',
      'schema_migrations',
      'snapshots',
      'usage_framework_buckets',
      'usage_program_buckets',
      'usage_removals',
      'usage_row_counts',
    ]);
    await store.close();

    store = await openStore({ path: dbPath(), now: () => new Date('2030-01-01T00:00:00Z') });
    expect(
      await rawSql(store).query('SELECT version, name, applied_at FROM schema_migrations ORDER BY version'),
    ).toEqual(shipped.map((m) => ({ version: m.version, name: m.name, applied_at: new Date('2025-01-01T00:00:00Z') })));
    await store.close();
  });

  it('upgrades an older file in place, keeping its data', async () => {
    // A file made by the first release only, opened by a later one.
    let store = await openStore({ path: dbPath(), migrations: [shipped[0]!] });
    await store.runs.start({ runId: 'r1', command: 'collect', options: {} });
    await store.close();

    store = await openStore({ path: dbPath(), migrations: [...shipped, fixtures[0]!] });
    expect(await store.schemaVersion()).toBe(900);
    expect(await rawSql(store).query('SELECT run_id, note FROM run_notes')).toEqual([{ run_id: 'r1', note: null }]);
    await store.close();
  });

  it('rolls a failing migration back entirely and reports which', async () => {
    await (await openStore({ path: dbPath(), migrations: shipped })).close();
    await expect(openStore({ path: dbPath(), migrations: [...shipped, ...fixtures] })).rejects.toThrow(
      /901_broken\.sql failed and was rolled back/,
    );
    const store = await openStore({ path: dbPath(), migrations: [...shipped, fixtures[0]!] });
    expect(await store.schemaVersion()).toBe(900); // 900 committed before 901 failed
    expect(
      await rawSql(store).query("SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = 'should_not_exist'"),
    ).toEqual([{ n: 0n }]);
    await store.close();
  });

  it('refuses a file from a newer release, read-write and read-only, and leaves it unchanged', async () => {
    const store = await openStore({ path: dbPath() });
    await rawSql(store).run("INSERT INTO schema_migrations VALUES (999, 'future', now())");
    await store.close();
    const err = await openStore({ path: dbPath() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toMatch(/schema version 999.*Upgrade usage-pipeline/);
    await expect(openStore({ path: dbPath(), readOnly: true })).rejects.toBeInstanceOf(SchemaTooNewError);
    // The refusal released the file: it can be opened again (here with a release that knows 999).
    const future = await openStore({
      path: dbPath(),
      migrations: [...shipped, { version: 999, name: 'future', file: 'queries/schema/001_init.sql' }],
    });
    expect(await future.schemaVersion()).toBe(999);
    await future.close();
  });

  it('a read-only open does not migrate an older file', async () => {
    await (await openStore({ path: dbPath(), migrations: [shipped[0]!] })).close();
    const warnings: string[] = [];
    const log = {
      debug: quiet,
      info: quiet,
      error: quiet,
      warn: (m: string) => warnings.push(m),
      child() {
        return log;
      },
    };
    const ro = await openStore({ path: dbPath(), readOnly: true, migrations: [...shipped, fixtures[0]!], log });
    expect(await ro.schemaVersion()).toBe(1);
    expect(warnings.join()).toMatch(/older than this release/);
    await ro.close();
  });
});
