// Every report ties to program_spend to the cent, per program and in total: snapshot_storage,
// transfer, framework_spend (with its unattributed and no-framework lines), FOCUS BilledCost, the
// workbook's Summary and the manifest; on the small world and on a medium one (380 programs). And a
// finalised month keeps its files' content after a restatement, listing the change as corrections.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { loadMonth, type Loaded } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
const rp = (p: string) => `read_parquet('${p}')`;

describe.each(['small', 'medium'] as const)('tie-out on the %s world', (scenario) => {
  let L: Loaded;
  let r: ReportResult;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH, scenario });
    r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['parquet', 'xlsx', 'focus'],
      priceBookPath: BOOK,
      now: new Date(L.now),
    });
  }, 300_000);
  afterAll(async () => {
    await L?.store.close();
  });

  test('per program and in total, every report equals program_spend to the cent', async () => {
    const f = (n: string) => rp(join(r.dir, n));
    const diffs = await rawSql(L.store).query(`
      WITH ps AS (SELECT program_id, metric, sum(coalesce(cost, 0)) AS c FROM ${f('program_spend.parquet')} GROUP BY ALL),
      p AS (SELECT program_id, sum(c) AS all_c,
                   sum(c) FILTER (WHERE metric = 'snapshot_storage_bytes_month') AS snap_c,
                   sum(c) FILTER (WHERE metric IN ('public_network_transfer_bytes', 'private_network_transfer_bytes')) AS xfer_c
            FROM ps GROUP BY program_id),
      s AS (SELECT program_id, sum(coalesce(cost, 0)) AS c FROM ${f('snapshot_storage.parquet')} GROUP BY ALL),
      t AS (SELECT program_id, sum(coalesce(cost, 0)) AS c FROM ${f('transfer.parquet')} GROUP BY ALL),
      fw AS (SELECT program_id, sum(coalesce(cost, 0)) AS c FROM ${f('framework_spend.parquet')} GROUP BY ALL),
      fo AS (SELECT "SubAccountId" AS program_id, sum(coalesce("BilledCost", 0)) AS c FROM ${f(`focus-${MONTH}.parquet`)} GROUP BY ALL)
      SELECT p.program_id, p.all_c, p.snap_c, s.c AS snap, p.xfer_c, t.c AS xfer, fw.c AS fw, fo.c AS focus
      FROM p LEFT JOIN s USING (program_id) LEFT JOIN t USING (program_id) LEFT JOIN fw USING (program_id) LEFT JOIN fo USING (program_id)
      WHERE coalesce(p.snap_c, 0) <> coalesce(s.c, 0) OR coalesce(p.xfer_c, 0) <> coalesce(t.c, 0)
         OR p.all_c <> coalesce(fw.c, 0) OR p.all_c <> coalesce(fo.c, 0)`);
    expect(diffs).toEqual([]);
    // Per line too: the detail of a line adds up to it.
    const lineDiffs = await rawSql(L.store).query(`
      WITH d AS (SELECT program_line_no, sum(coalesce(cost, 0)) AS c FROM ${f('framework_spend.parquet')} GROUP BY ALL)
      SELECT l.line_no FROM ${f('program_spend.parquet')} l LEFT JOIN d ON d.program_line_no = l.line_no WHERE coalesce(l.cost, 0) <> coalesce(d.c, 0)`);
    expect(lineDiffs).toEqual([]);
    const [tot] = await rawSql(L.store).query<Record<string, string>>(`
      SELECT CAST(sum(coalesce(cost, 0)) AS VARCHAR) AS ps,
             (SELECT CAST(sum(coalesce("BilledCost", 0)) AS VARCHAR) FROM ${f(`focus-${MONTH}.parquet`)}) AS focus,
             (SELECT CAST(sum(coalesce(cost, 0)) AS VARCHAR) FROM ${f('framework_spend.parquet')}) AS fw,
             (SELECT count(*) FROM ${f('framework_spend.parquet')} WHERE line_type = 'no_framework') AS no_fw_lines
      FROM ${f('program_spend.parquet')}`);
    expect(tot!.focus).toBe(tot!.ps);
    expect(tot!.fw).toBe(tot!.ps);
    expect(Number(tot!.no_fw_lines)).toBeGreaterThan(0);
    expect(r.total).toBe(tot!.ps);
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.total).toBe(tot!.ps);
    expect(manifest.focus.billed_total).toBe(tot!.ps);
    // The Summary's per-program totals and grand total.
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(r.files.find((x) => x.path.endsWith('.xlsx'))!.path);
    const summary = new Map<string, number>();
    let grand: number | undefined;
    let inPrograms = false;
    wb.getWorksheet('Summary')!.eachRow((row) => {
      const a = row.getCell(1).value;
      if (a === 'Totals by program') inPrograms = true;
      else if (a === 'Total' && inPrograms) {
        grand = row.getCell(5).value as number;
        inPrograms = false;
      }
      // A program whose every line is unpriced has a blank cost (never 0) and is flagged UNPRICED.
      else if (inPrograms && a !== 'Organization' && typeof row.getCell(2).value === 'string') {
        const v = row.getCell(5).value as number | null;
        if (v === null) expect(row.getCell(7).value).toBe('UNPRICED');
        summary.set(String(row.getCell(2).value), v ?? 0);
      }
    });
    expect(Math.round(grand! * 100)).toBe(Math.round(Number(tot!.ps) * 100));
    const perProgram = await rawSql(L.store).query<{ program_id: string; c: string }>(
      `SELECT program_id, CAST(sum(coalesce(cost, 0)) AS VARCHAR) AS c FROM ${f('program_spend.parquet')} GROUP BY ALL`,
    );
    expect(summary.size).toBe(perProgram.length);
    for (const p of perProgram)
      expect(Math.round(summary.get(p.program_id)! * 100), p.program_id).toBe(Math.round(Number(p.c) * 100));
    // The medium world's workbook alone takes most of a minute to read back.
  }, 180_000);

  test('a gauge billed on its peak is charged once per month, shared between the periods', async () => {
    const rows = await rawSql(L.store).query<{
      program_id: string;
      metric: string;
      peak: string;
      charged: string;
      lines: bigint;
    }>(`
      WITH peak AS (SELECT program_id, metric, max(value) AS peak FROM usage_program
                    WHERE granularity = 'daily' AND metric IN ('synthetic_storage_size_bytes', 'logical_size_bytes') GROUP BY ALL)
      SELECT p.program_id, p.metric, CAST(p.peak AS VARCHAR) AS peak, CAST(sum(l.quantity_raw) AS VARCHAR) AS charged, count(*) AS lines
      FROM peak p JOIN ${rp(join(r.dir, 'program_spend.parquet'))} l ON l.program_id = p.program_id AND l.metric = p.metric
      GROUP BY ALL`);
    expect(rows.length).toBeGreaterThan(0);
    for (const x of rows) expect(x.charged, `${x.program_id} ${x.metric}`).toBe(x.peak);
  });
});

describe('finalise, restate, re-export', () => {
  let L: Loaded;
  beforeAll(async () => {
    L = await loadMonth({ month: MONTH });
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('the files keep their finalised content and the corrections list exactly the change', async () => {
    const out = join(L.dir, 'reports');
    const run = (o: { finalize?: boolean; day: number }) =>
      runReport({
        store: L.store,
        month: MONTH,
        outDir: out,
        formats: ['parquet', 'xlsx', 'focus'],
        priceBookPath: BOOK,
        now: new Date(L.now + o.day * 86_400_000),
        ...(o.finalize ? { finalize: true } : {}),
      });
    const fin = await run({ finalize: true, day: 0 });
    const sha = (x: ReportResult, name: string) => x.files.find((f) => f.path.endsWith(name))!.sha256;
    const m0 = JSON.parse(readFileSync(join(fin.dir, 'manifest.json'), 'utf8'));
    expect(m0).toMatchObject({ finalized: true, corrected: false });
    const recorded = (await L.store.report.finalized.finalizedState(MONTH))!.files;
    expect(recorded.map((x) => x.name).sort()).toEqual(
      fin.files
        .filter((f) => !f.path.endsWith('manifest.json'))
        .map((f) => f.path.slice(fin.dir.length + 1))
        .sort(),
    );

    const [target] = await rawSql(L.store).query<{ program_id: string; timeframe_start: Date }>(`
      SELECT program_id, timeframe_start FROM usage_program
      WHERE granularity = 'daily' AND metric = 'compute_unit_seconds' AND period_plan IN ('launch', 'scale')
        AND timeframe_start = TIMESTAMPTZ '2025-10-12 00:00:00+00' ORDER BY program_id LIMIT 1`);
    await rawSql(L.store).run(
      `UPDATE usage_program_buckets SET compute_unit_seconds = compute_unit_seconds + 360000 WHERE granularity = 'daily'
      AND compute_unit_seconds IS NOT NULL AND program_id = $p AND timeframe_start = $t`,
      { p: target!.program_id, t: target!.timeframe_start },
    );

    const after = await run({ day: 1 });
    for (const n of [
      'program_spend.parquet',
      'framework_spend.parquet',
      'snapshot_storage.parquet',
      'transfer.parquet',
    ])
      expect(sha(after, n), n).toBe(sha(fin, n));
    expect(after.total).toBe(fin.total);
    const corr = await rawSql(L.store).query<{
      program_id: string;
      metric: string;
      change: string;
      cost_change: string;
      quantity_raw_change: string;
    }>(
      `SELECT program_id, metric, change, CAST(cost_change AS VARCHAR) AS cost_change, CAST(quantity_raw_change AS VARCHAR) AS quantity_raw_change
       FROM ${rp(join(after.dir, 'corrections.parquet'))}`,
    );
    expect(corr).toHaveLength(1);
    expect(corr[0]).toMatchObject({
      program_id: target!.program_id,
      metric: 'compute_unit_seconds',
      change: 'changed',
      quantity_raw_change: '360000',
    });
    expect(Number(corr[0]!.cost_change)).toBeGreaterThan(0);
    const m1 = JSON.parse(readFileSync(join(after.dir, 'manifest.json'), 'utf8'));
    expect(m1).toMatchObject({
      finalized: true,
      corrected: true,
      total: fin.total,
      corrections: { rows: 1, net_amount: corr[0]!.cost_change, file: 'corrections.parquet' },
    });
    expect(m1.files.map((f: { name: string }) => f.name)).toContain('corrections.parquet');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(after.files.find((x) => x.path.endsWith('.xlsx'))!.path);
    expect(wb.getWorksheet('corrections')!.getRow(2).getCell(2).value).toBe(`${MONTH}#files`);
  });
});
