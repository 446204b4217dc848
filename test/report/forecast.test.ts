// The month-end forecast: for a finished month the projection is the actual total, to the cent; in
// the middle of a steady month it lands within FORECAST_TOLERANCE of the month's final total. Both
// run the real report on a real DuckDB file.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport } from '../../src/report/run.js';
import { computeForecast, type DailyProgramSpend } from '../../src/report/forecast.js';
import { V2_FRAMEWORK_METRICS } from '../../src/contract/api.js';
import { openStore, type Store } from '../../src/store/store.js';
import { rawSql } from '../../src/store/rawSql.js';
import { appendRows, type UsageRowIn } from '../support/rowLoader.js';
import { DAY, loadMonth, type Loaded } from '../support/month.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
/** The stated tolerance of a mid-month projection on a steady month. */
const FORECAST_TOLERANCE = 0.01;

describe('a complete past month, clock after its end', () => {
  let L: Loaded;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('the projection equals the actual total, per program and in total; no Forecast sheet', async () => {
    const r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['xlsx'],
      priceBookPath: BOOK,
      now: new Date(L.now),
    });
    const f = r.forecast!;
    expect(f).toMatchObject({ current: false, daysInPeriod: 31, completeDays: 31, remainingDays: 0 });
    expect(f.totals.projection).toBe(r.total);
    expect(f.totals.monthToDate).toBe(r.total);
    for (const p of f.programs) expect(p.projection).toBe(p.monthToDate);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, `usage-${MONTH}.xlsx`));
    expect(wb.getWorksheet('Forecast')).toBeUndefined();
  });
});

// A steady month: three programs with the same usage every day (compute, storage, and public transfer
// that uses up its included 500 GB on day 5).
const ORG = 'org-steady';
const PROGRAMS = [
  { id: 'prg-steady-a', plan: 'launch', cuSeconds: 20 * 3600, storedGb: 50, transferGb: 100 },
  { id: 'prg-steady-b', plan: 'scale', cuSeconds: 45 * 3600, storedGb: 120, transferGb: 140 },
  { id: 'prg-steady-c', plan: 'scale', cuSeconds: 7 * 3600, storedGb: 10, transferGb: 0 },
];

/** `scale(day)` multiplies a day's usage (day 1..31); 1 for a steady month. */
async function loadSteady(
  store: Store,
  fromDay: number,
  toDay: number,
  scale: (day: number) => bigint = () => 1n,
): Promise<void> {
  const monthStart = Date.UTC(2025, 9, 1);
  const windowStart = new Date(monthStart + (fromDay - 1) * DAY);
  const windowEnd = new Date(monthStart + (toDay - 1) * DAY);
  const rows: UsageRowIn[] = [];
  for (let t = windowStart.getTime(); t < windowEnd.getTime(); t += DAY) {
    const k = scale(Math.round((t - monthStart) / DAY) + 1);
    for (const p of PROGRAMS) {
      const base = {
        org_id: ORG,
        program_id: p.id,
        period_id: `pd-${p.id}`,
        period_plan: p.plan,
        period_start: new Date(Date.UTC(2025, 0, 1)),
        period_end: null,
        timeframe_start: new Date(t),
        timeframe_end: new Date(t + DAY),
      };
      rows.push({ ...base, metric: 'compute_unit_seconds', value: BigInt(p.cuSeconds) * k });
      // Bytes stored all day as byte-months: bytes x 24 / 744.
      rows.push({
        ...base,
        metric: 'root_branch_bytes_month',
        value: (BigInt(p.storedGb) * 1_000_000_000n * 24n * k) / 744n,
      });
      if (p.transferGb > 0)
        rows.push({
          ...base,
          metric: 'public_network_transfer_bytes',
          value: BigInt(p.transferGb) * 1_000_000_000n * k,
        });
    }
  }
  const b = store.usage.beginBatch({
    table: 'usage_program',
    apiVersion: 'v2',
    granularity: 'daily',
    windowStart,
    windowEnd,
    scope: { orgId: ORG },
    coverage: { source: 'v2_programs', scope: ORG, status: 'complete' },
    runId: `run-${fromDay}`,
    collectedAt: windowEnd,
  });
  await appendRows(b, rows);
  await b.commit();
  await store.inventory.upsertPrograms(
    PROGRAMS.map((p) => ({
      program_id: p.id,
      org_id: ORG,
      name: p.id.replace('prg-', ''),
      region_id: 'r1',
      created_at: new Date(Date.UTC(2025, 0, 1)),
    })),
    { seenAt: windowEnd },
  );
}

describe('mid-month on a steady month', () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'forecast-test-'));
    store = await openStore({ path: join(dir, 'usage.duckdb') });
  });
  afterAll(async () => {
    await store?.close();
  });

  test(`the projection lands within ${FORECAST_TOLERANCE * 100}% of the final total and is labelled a projection`, async () => {
    await loadSteady(store, 1, 16); // 1..15 October collected
    const mid = await runReport({
      store,
      month: MONTH,
      outDir: join(dir, 'mid'),
      formats: ['xlsx', 'html'],
      priceBookPath: BOOK,
      now: new Date('2025-10-16T09:30:00Z'),
    });
    const f = mid.forecast!;
    expect(f).toMatchObject({ current: true, completeDays: 15, remainingDays: 16, windowDays: 7 });
    expect(f.method).toMatch(/^Projection, not a bill/);
    expect(f.totals.monthToDate).toBe(mid.total);
    expect(mid.partial).toBe(true); // a month in progress is not completely collected

    await loadSteady(store, 16, 32); // the rest of the month
    const end = await runReport({
      store,
      month: MONTH,
      outDir: join(dir, 'end'),
      formats: ['xlsx'],
      priceBookPath: BOOK,
      now: new Date('2025-11-03T00:00:00Z'),
    });
    const actual = Number(end.total);
    const projected = Number(f.totals.projection);
    expect(actual).toBeGreaterThan(Number(mid.total) * 1.9);
    expect(Math.abs(projected - actual) / actual).toBeLessThanOrEqual(FORECAST_TOLERANCE);

    // The workbook's Forecast sheet says it is a projection and carries the same figures.
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(mid.dir, `usage-${MONTH}.xlsx`));
    expect(wb.worksheets.map((w) => w.name).slice(0, 2)).toEqual(['Summary', 'Forecast']);
    const ws = wb.getWorksheet('Forecast')!;
    expect(String(ws.getCell('A1').value)).toMatch(/PROJECTION/);
    expect(String(ws.getCell('B2').value)).toBe(f.method);
    const last = ws.getRow(ws.rowCount);
    expect(last.getCell(1).value).toBe('Total (projection)');
    expect(Math.round((last.getCell(6).value as number) * 100)).toBe(Math.round(projected * 100));
    expect(Math.round((last.getCell(3).value as number) * 100)).toBe(Math.round(Number(mid.total) * 100));
  });
});

describe('mid-month with usage that changes every day', () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'forecast-days-test-'));
    store = await openStore({ path: join(dir, 'usage.duckdb') });
  });
  afterAll(async () => {
    await store?.close();
  });

  // The report gives the forecast each program's spend summed over three spans (forecast_programs.sql);
  // the same forecast computed from one row per program and day (the detail's own macro) must agree,
  // so a span boundary off by a day (the trend window, the cutoff) shows here.
  test('the forecast equals the one computed from every program day', async () => {
    await loadSteady(store, 1, 17, (day) => BigInt(day * day)); // 1..16 October, growing usage
    const now = new Date('2025-10-16T09:30:00Z'); // the 16th is collected but not complete
    const r = await runReport({
      store,
      month: MONTH,
      outDir: join(dir, 'mid'),
      formats: ['xlsx'],
      priceBookPath: BOOK,
      now,
    });
    const days = await rawSql(store).query<DailyProgramSpend>(
      'SELECT program_id, any_value(coalesce(program_name, program_id)) AS program_name, usage_day AS day, ' +
        'CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost ' +
        "FROM spend_daily_report('daily', CAST($from AS TIMESTAMPTZ), CAST($to AS TIMESTAMPTZ), $metrics) GROUP BY program_id, usage_day",
      { from: new Date(Date.UTC(2025, 9, 1)), to: new Date(Date.UTC(2025, 10, 1)), metrics: [...V2_FRAMEWORK_METRICS] },
    );
    expect(days.length).toBe(PROGRAMS.length * 16);
    const f = r.forecast!;
    expect(f).toMatchObject({ current: true, completeDays: 15, windowDays: 7 });
    const expected = computeForecast({
      rangeStart: new Date(Date.UTC(2025, 9, 1)),
      rangeEnd: new Date(Date.UTC(2025, 10, 1)),
      now,
      dataEnd: new Date(Date.UTC(2025, 9, 17)),
      currency: f.currency,
      daily: days,
    });
    expect(f).toEqual(expected);
    // Growing usage: the last day still in progress is in month to date, not in the complete days.
    expect(Number(f.totals.monthToDate)).toBeGreaterThan(Number(f.totals.completeDaysSpend));
  });
});
