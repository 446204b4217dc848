// Spend in the database: after the demo, the analyst copy's spend views give the month's
// program_spend.parquet totals to the cent, the daily lines add up to them, and every example query
// runs and says something checkable.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoCopy } from '../support/demo.js';
import { openStore, type Store } from '../../src/store/store.js';
import { quoteLiteral } from '../../src/store/sql.js';
import { rawSql } from '../../src/store/rawSql.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const MONTH = '2026-10-01';
const pin = (sql: string) => sql.replaceAll('now()', `TIMESTAMPTZ '${new Date(NOW).toISOString()}'`);
const example = (file: string) => pin(readFileSync(join('queries/examples', file), 'utf8'));

describe('spend views in the analyst copy', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-views-'));
  let store: Store;
  let parquet: string;

  beforeAll(async () => {
    const r = await demoCopy(dir, NOW);
    expect(r.collectExitCode).toBe(0);
    parquet = quoteLiteral(join(r.outDir, '2026-10', 'program_spend.parquet'));
    store = await openStore({ path: r.analystCopy, readOnly: true });
  }, 120_000);
  afterAll(async () => store?.close());

  it('holds the price book and the metric catalogue as tables', async () => {
    const [book] = await rawSql(store).query<{ revision: string; n: bigint }>(
      'SELECT revision, (SELECT count(*) FROM price_rates) AS n FROM price_book',
    );
    expect(book!.revision).toBe('2025-10-01.3');
    expect(Number(book!.n)).toBeGreaterThan(10);
    const m = await rawSql(store).query<{ metric: string; divisor: bigint; display_name: string; aggregation: string }>(
      "SELECT metric, divisor, display_name, aggregation FROM price_metrics WHERE metric IN ('compute_unit_seconds', 'synthetic_storage_size_bytes') ORDER BY metric",
    );
    expect(m.map((r) => [r.metric, String(r.divisor), r.display_name, r.aggregation])).toEqual([
      ['compute_unit_seconds', '3600', 'Compute', 'sum'],
      ['synthetic_storage_size_bytes', '1000000000', 'Synthetic storage size (legacy)', 'max'],
    ]);
  });

  it("gives last month's total per program and in all equal to program_spend.parquet to the cent", async () => {
    const fromFile = await rawSql(store).query<{ program_id: string; cost: string | null }>(
      `SELECT program_id, CAST(sum(cost) AS VARCHAR) AS cost FROM read_parquet(${parquet}) GROUP BY program_id ORDER BY program_id`,
    );
    const fromView = await rawSql(store).query<{ program_id: string; cost: string | null }>(
      'SELECT program_id, CAST(cost AS VARCHAR) AS cost FROM spend_month_program WHERE billing_month = $m ORDER BY program_id',
      { m: MONTH },
    );
    expect(fromFile.length).toBeGreaterThan(5);
    expect(fromView).toEqual(fromFile);
    const [t] = await rawSql(store).query<{ file: string; view: string; days: string }>(
      `SELECT (SELECT CAST(sum(cost) AS VARCHAR) FROM read_parquet(${parquet})) AS file,
              (SELECT CAST(sum(cost) AS VARCHAR) FROM spend_month_program WHERE billing_month = $m) AS view,
              (SELECT CAST(sum(cost) AS VARCHAR) FROM spend_daily WHERE billing_month = $m) AS days`,
      { m: MONTH },
    );
    expect(Number(t!.file)).toBeGreaterThan(100);
    expect(t!.view).toBe(t!.file);
    expect(t!.days).toBe(t!.file);
    // The metric and framework views split the same month the same way; the framework view carries
    // the charges no framework reports as explicit lines, so it adds up to the month too.
    const [s] = await rawSql(store).query<{ by_metric: string; v2_fw: string; v2_prog: string }>(
      `SELECT (SELECT CAST(sum(cost) AS VARCHAR) FROM spend_month_metric WHERE billing_month = $m) AS by_metric,
              (SELECT CAST(sum(cost) AS VARCHAR) FROM spend_month_framework WHERE billing_month = $m) AS v2_fw,
              (SELECT CAST(sum(cost) AS VARCHAR) FROM read_parquet(${parquet}) WHERE api_version = 'v2' AND metric IN
                 ('compute_unit_seconds', 'root_branch_bytes_month', 'child_branch_bytes_month', 'instant_restore_bytes_month',
                  'public_network_transfer_bytes', 'private_network_transfer_bytes')) AS v2_prog`,
      { m: MONTH },
    );
    expect(s!.by_metric).toBe(t!.file);
    expect(s!.v2_fw).toBe(t!.file);
    expect(Number(s!.v2_prog)).toBeLessThan(Number(t!.file));
  });

  it("prices a range of months alone as the views price it in the whole history's, row for row", async () => {
    const m = `TIMESTAMPTZ '${MONTH} 00:00:00+00', TIMESTAMPTZ '2026-11-01 00:00:00+00'`;
    const same = async (ranged: string, view: string) => {
      const [r] = await rawSql(store).query<{ ranged: bigint; view: bigint; both: bigint }>(
        `WITH a AS (${ranged}), b AS (${view})
         SELECT (SELECT count(*) FROM a) AS ranged, (SELECT count(*) FROM b) AS view,
                (SELECT count(*) FROM (SELECT * FROM a INTERSECT ALL SELECT * FROM b)) AS both`,
        view.includes('$m') ? { m: MONTH } : {},
      );
      expect(Number(r!.ranged), ranged).toBeGreaterThan(0);
      expect([r!.ranged, r!.both], ranged).toEqual([r!.view, r!.view]);
    };
    for (const v of ['spend_month_program', 'spend_month_metric', 'spend_month_framework'])
      await same(`SELECT * FROM ${v}_in(${m})`, `SELECT * FROM ${v} WHERE billing_month = $m`);
    // line_no is numbered within the range, as the month's report numbers it; the rest is the same.
    await same(
      `SELECT * EXCLUDE (line_no) FROM spend_report_lines_in(${m})`,
      `SELECT l.* EXCLUDE (line_no) FROM spend_lines l JOIN spend_month_granularity g USING (billing_month, granularity)
       WHERE billing_month = $m`,
    );
    await same(
      "SELECT * FROM spend_daily_between(DATE '2026-10-03', DATE '2026-11-02')",
      "SELECT * FROM spend_daily WHERE usage_day >= DATE '2026-10-03' AND usage_day < DATE '2026-11-02'",
    );
  });

  it('marks unpriced usage with a NULL cost and a reason', async () => {
    const rows = await rawSql(store).query<{
      cost: string | null;
      unpriced_reason: string | null;
      period_plan: string;
    }>('SELECT cost, unpriced_reason, period_plan FROM spend_lines WHERE NOT priced AND billing_month = $m', {
      m: MONTH,
    });
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.cost).toBeNull();
      expect(r.unpriced_reason).toMatch(/^unpriced: /);
    }
    const [n] = await rawSql(store).query<{ n: bigint }>(
      'SELECT count(*) AS n FROM spend_lines WHERE priced AND (cost IS NULL OR unpriced_reason IS NOT NULL)',
    );
    expect(Number(n!.n)).toBe(0);
  });

  it("gives a date range's spend as the sum of its days (example 08)", async () => {
    const days = await rawSql(store).query<{ usage_day: Date; cost: string }>(
      example('08_spend_by_day_for_a_range.sql'),
    );
    expect(days.length).toBe(14);
    const cents = (v: string | null) => Math.round(Number(v ?? 0) * 100);
    const [range] = await rawSql(store).query<{ cost: string }>(
      "SELECT CAST(sum(cost) AS VARCHAR) AS cost FROM spend_daily WHERE usage_day >= DATE '2026-10-01' AND usage_day < DATE '2026-10-15'",
    );
    expect(days.reduce((a, d) => a + cents(d.cost), 0)).toBe(cents(range!.cost));
    expect(cents(range!.cost)).toBeGreaterThan(0);
  });

  it('example 07 is spend_month_program for last month, every program of the parquet file', async () => {
    const rows = await rawSql(store).query<{ program_id: string; cost: string | null }>(
      example('07_spend_by_program_last_month.sql'),
    );
    const [f] = await rawSql(store).query<{ n: bigint; cost: string }>(
      `SELECT count(DISTINCT program_id) AS n, CAST(sum(cost) AS VARCHAR) AS cost FROM read_parquet(${parquet})`,
    );
    expect(rows.length).toBe(Number(f!.n));
    const total = rows.reduce((a, r) => a + Math.round(Number(r.cost ?? 0) * 100), 0);
    expect(total).toBe(Math.round(Number(f!.cost) * 100));
  });

  it('example 01 counts legacy compute: without its LIMIT it covers v1 and v2 programs', async () => {
    const rows = await rawSql(store).query<{ api_version: string; compute_hours: number }>(
      example('01_compute_hours_last_month.sql').replace(/LIMIT 5;/, ';'),
    );
    expect(new Set(rows.map((r) => r.api_version))).toEqual(new Set(['v1', 'v2']));
    const [truth] = await rawSql(store).query<{ h: number }>(
      `SELECT sum(value) FILTER (WHERE metric = 'compute_unit_seconds') / 3600 + sum(value) FILTER (WHERE metric = 'compute_time_seconds') / 3600 AS h
       FROM usage_program WHERE granularity = 'daily' AND timeframe_start >= TIMESTAMPTZ '2026-10-01 00:00:00+00' AND timeframe_start < TIMESTAMPTZ '2026-11-01 00:00:00+00'`,
    );
    expect(rows.reduce((a, r) => a + r.compute_hours, 0)).toBeCloseTo(truth!.h, 0);
  });

  it('example 09 ranks frameworks and legacy programs together by compute', async () => {
    const rows = await rawSql(store).query<{ api_version: string; framework_id: string | null; raw_seconds: bigint }>(
      example('09_top_frameworks_by_compute.sql').replace(/LIMIT 20;/, ';'),
    );
    expect(rows.some((r) => r.api_version === 'v1' && r.framework_id === null)).toBe(true);
    expect(rows.filter((r) => r.api_version === 'v2').every((r) => r.framework_id?.startsWith('br-'))).toBe(true);
    const [fw] = await rawSql(store).query<{ s: bigint }>(
      "SELECT sum(value) AS s FROM usage_framework WHERE granularity = 'daily' AND metric = 'compute_unit_seconds' AND timeframe_start >= TIMESTAMPTZ '2026-10-01 00:00:00+00' AND timeframe_start < TIMESTAMPTZ '2026-11-01 00:00:00+00'",
    );
    expect(rows.filter((r) => r.api_version === 'v2').reduce((a, r) => a + BigInt(r.raw_seconds), 0n)).toBe(
      BigInt(fw!.s),
    );
  });

  it('example 10 trends v1 and v2 storage by month in GB-months', async () => {
    const rows = await rawSql(store).query<{ month: unknown; api_version: string; gb_months: number }>(
      example('10_storage_trend.sql'),
    );
    expect(new Set(rows.map((r) => r.api_version))).toEqual(new Set(['v1', 'v2']));
    expect(new Set(rows.map((r) => String(r.month))).size).toBeGreaterThan(3);
    expect(rows.every((r) => r.gb_months >= 0)).toBe(true);
  });

  it('example 11 sets public transfer against the allowance, which the billable part is net of', async () => {
    const rows = await rawSql(store).query<{
      public_gb: string;
      included_gb: string | null;
      allowance_used_gb: string;
      billable_gb: string;
    }>(example('11_transfer_against_allowance.sql'));
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.included_gb !== null && Number(r.included_gb) === 500)).toBe(true);
    for (const r of rows) {
      expect(Number(r.public_gb) - Number(r.allowance_used_gb)).toBeCloseTo(Number(r.billable_gb), 6);
      if (r.included_gb !== null) expect(Number(r.allowance_used_gb)).toBeLessThanOrEqual(Number(r.included_gb));
    }
  });

  it.each(
    readdirSync('queries/examples')
      .filter((f) => f.endsWith('.sql'))
      .sort(),
  )('%s runs against the demo database', async (file) => {
    const rows = await rawSql(store).query(example(file));
    expect(rows.length, file).toBeGreaterThan(0);
  });
});
