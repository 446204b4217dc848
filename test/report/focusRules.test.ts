// Every FOCUS file the project writes, checked rule by rule against FOCUS 1.2 (test/support/focusRules.ts,
// each rule under its id): a month with unpriced plans, and a finalised month with corrections (the
// demo's month is checked in test/cli/demo.int.test.ts). Unpriced usage is left out of the file, said so in
// the manifest, the report's output and the About sheet, and the file's total is the priced total. A
// file with a null cost fails the check.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { formatReportSummary } from '../../src/cli/format.js';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { rawSql } from '../../src/store/rawSql.js';
import { checkFocusFile, failures, FOCUS_RULES } from '../support/focusRules.js';
import { loadMonth, type Loaded } from '../support/month.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
const focusPath = (r: ReportResult) => r.files.find((f) => f.path.includes(`focus-${MONTH}.parquet`))!.path;

async function expectConformant(L: Loaded, path: string, label: string): Promise<void> {
  const results = await checkFocusFile(L.store, path);
  expect(results.length).toBe(FOCUS_RULES.length + 1);
  console.log(`FOCUS 1.2 rules on ${label}: ${results.length} checked, ${failures(results).length} failed`);
  expect(failures(results), label).toEqual([]);
}

describe('FOCUS 1.2 rule by rule: a month with unpriced plans', () => {
  let L: Loaded;
  let r: ReportResult;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
    r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['parquet', 'xlsx', 'focus'],
      priceBookPath: BOOK,
      now: new Date(L.now),
    });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('every rule holds', async () => {
    expect(r.unpricedLines).toBeGreaterThan(0); // the month does have unpriced plans
    await expectConformant(L, focusPath(r), `the FOCUS file of ${MONTH} (unpriced plans)`);
  });

  test('unpriced usage is left out, and the manifest, the output and the About sheet say how much, of which plans and why', async () => {
    const path = focusPath(r);
    const [s] = await rawSql(L.store).query<{ billed: string; n: bigint; unpriced: bigint }>(`
      SELECT CAST(sum("BilledCost") AS DECIMAL(18,2)) AS billed, count(*) AS n, count(*) FILTER (WHERE "x_Unpriced") AS unpriced FROM read_parquet('${path}')`);
    expect(s!.unpriced).toBe(0n);
    expect(s!.billed).toBe(r.total); // program_spend's total: priced lines only
    const [plans] = await rawSql(L.store).query<{ plans: string[]; lines: bigint }>(`
      SELECT list(DISTINCT period_plan ORDER BY period_plan) AS plans, count(*) AS lines FROM read_parquet('${join(r.dir, 'program_spend.parquet')}') WHERE NOT priced`);
    expect(r.focus!.leftOut).toMatchObject({ lines: r.unpricedLines, plans: plans!.plans });
    expect(Number(plans!.lines)).toBe(r.unpricedLines);

    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.focus).toMatchObject({
      rows: Number(s!.n),
      billed_total: r.total,
      cost_basis: `estimate from price book revision ${r.priceBookRevision}, not an invoice`,
      left_out: {
        lines: r.unpricedLines,
        plans: plans!.plans,
        why: expect.stringMatching(/must not be null and no price is invented/),
      },
    });
    expect(manifest.focus.left_out.by_plan.reduce((a: number, p: { lines: number }) => a + p.lines, 0)).toBe(
      r.unpricedLines,
    );

    // The summary is wrapped to the terminal's width: compare its words, not its line breaks.
    const out = formatReportSummary(r).replace(/\s+/g, ' ');
    expect(out).toContain(`FOCUS left out ${r.unpricedLines} unpriced line(s) of plan(s) ${plans!.plans.join(', ')}`);
    expect(out).toContain(`costs are an estimate from price book revision ${r.priceBookRevision}, not an invoice`);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(r.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    const about = new Map<string, string>();
    wb.getWorksheet('About')!.eachRow((row) => {
      if (typeof row.getCell(1).value === 'string')
        about.set(row.getCell(1).value as string, String(row.getCell(2).value));
    });
    expect(about.get('Left out of FOCUS')).toContain(
      `${r.unpricedLines} unpriced line(s) of plan(s) ${plans!.plans.join(', ')}`,
    );
    expect(about.get('FOCUS file')).toContain(
      `estimate from price book revision ${r.priceBookRevision}, not an invoice`,
    );

    // Every row says what its costs are.
    const basis = await rawSql(L.store).query<{ b: string }>(
      `SELECT DISTINCT "x_CostBasis" AS b FROM read_parquet('${path}')`,
    );
    expect(basis).toEqual([{ b: `estimate from price book revision ${r.priceBookRevision}, not an invoice` }]);
  });

  test('the check fails on a file with a null cost', async () => {
    const broken = join(L.dir, 'focus-null-cost.parquet');
    await rawSql(L.store)
      .run(`COPY (SELECT * REPLACE (CASE WHEN row_number() OVER () = 1 THEN NULL ELSE "BilledCost" END AS "BilledCost",
      CASE WHEN row_number() OVER () = 2 THEN NULL ELSE "ListCost" END AS "ListCost") FROM read_parquet('${focusPath(r)}')) TO '${broken}' (FORMAT parquet)`);
    const failed = failures(await checkFocusFile(L.store, broken));
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^BilledCost-C-001-M: /),
        expect.stringMatching(/^ListCost-C-003-M: /),
        expect.stringMatching(/^ListCost-C-004-M: /),
      ]),
    );
  });
});

describe('FOCUS 1.2 rule by rule: a finalised month with corrections', () => {
  let L: Loaded;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('every rule holds on the Correction rows too', async () => {
    const run = (now: number, finalize = false) =>
      runReport({
        store: L.store,
        month: MONTH,
        outDir: join(L.dir, 'reports'),
        formats: ['focus'],
        priceBookPath: BOOK,
        now: new Date(now),
        ...(finalize ? { finalize } : {}),
      });
    await run(L.now, true);
    // A restated bucket: one program's compute on one day of a priced plan grows by 100 CU-hours.
    const [target] = await rawSql(L.store).query<{ program_id: string; timeframe_start: Date }>(`
      SELECT program_id, timeframe_start FROM usage_program
      WHERE granularity = 'daily' AND metric = 'compute_unit_seconds' AND period_plan IN ('launch', 'scale')
        AND timeframe_start = TIMESTAMPTZ '2025-10-12 00:00:00+00' ORDER BY program_id LIMIT 1`);
    await rawSql(L.store).run(
      `UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds + 360000 WHERE granularity = 'daily'
      AND compute_unit_seconds IS NOT NULL AND program_id = $p AND timeframe_start = $t`,
      { p: target!.program_id, t: target!.timeframe_start },
    );
    const after = await run(L.now + 86_400_000);
    expect(after.focus!.corrections).toBeGreaterThan(0);
    await expectConformant(
      L,
      focusPath(after),
      `the FOCUS file of ${MONTH} finalised, with ${after.focus!.corrections} Correction rows`,
    );
  });
});
