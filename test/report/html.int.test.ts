// The charts report: one self-contained file, linked from the workbook and listed in the manifest,
// rendered by headless Chromium to a PNG (and printed to PDF) with no console errors, no network
// requests and data in every chart.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { Browser } from '../support/chromium.js';
import { DAY, loadMonth, monthRange, type Loaded } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const CHARTS = ['forecast', 'daily-spend', 'top-programs', 'top-frameworks', 'storage', 'snapshots', 'transfer'];

describe('report.html for a month in progress', () => {
  let L: Loaded;
  let r: ReportResult;
  let htmlPath: string;
  beforeAll(async () => {
    const { from } = monthRange(MONTH);
    // Collected through the 20th; the clock mid-morning on the 21st.
    L = await loadMonth({ month: MONTH, until: from + 20 * DAY, now: from + 20 * DAY + 10 * 3_600_000 });
    r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['parquet', 'xlsx', 'html'],
      priceBookPath: 'config/prices.toml',
      now: new Date(L.now),
    });
    htmlPath = join(r.dir, 'report.html');
  });
  afterAll(async () => {
    await L?.store.close();
  });

  test('is self-contained, escapes API text, is in the manifest and linked from the Summary sheet', async () => {
    const html = readFileSync(htmlPath, 'utf8');
    expect(html).not.toMatch(/\b(src|href)\s*=\s*["']?(https?:)?\/\//i);
    expect(html).not.toMatch(/@import|url\(|<link\b|<iframe\b/i);
    expect(html).toContain('=1+1'); // the program named like a formula, as text
    expect(html).toMatch(/Month-end forecast \(PROJECTION\)/);
    // Unpriced usage and assumed rates are stated, with the count and the amount and share.
    expect(r.unpricedLines).toBeGreaterThan(0);
    expect(html).toContain(
      `UNPRICED: ${r.unpricedLines} line(s) have no rate in the price book. Their cost is blank (not 0)`,
    );
    expect(html).toContain(
      `of the total (${r.assumed.share}%) rests on ${r.assumed.used.length} rate(s) the price book marks assumed`,
    );
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    const entry = manifest.files.find((f: { name: string }) => f.name === 'report.html');
    expect(entry.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.forecast).toMatchObject({ current: true, label: 'PROJECTION', month_to_date: r.total });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, `usage-${MONTH}.xlsx`));
    const link = wb.getWorksheet('Summary')!.getCell('A3');
    expect(link.type).toBe(ExcelJS.ValueType.Hyperlink);
    expect((link.value as { hyperlink: string }).hyperlink).toBe('report.html');
  });

  test('renders in headless Chromium with no console errors, no network, and data in every chart', async () => {
    const browser = await Browser.launch();
    try {
      const { sessionId, events } = await browser.open(pathToFileURL(htmlPath).href);
      const { result } = await browser.send<{ result: { value: string } }>(
        'Runtime.evaluate',
        { expression: 'JSON.stringify(window.__charts)', returnByValue: true },
        sessionId,
      );
      const charts = JSON.parse(result.value) as Record<string, { declared: number; marks: number }>;
      expect(Object.keys(charts).sort()).toEqual([...CHARTS].sort());
      // Snapshots are known only since the inventory first listed them (the clock's morning, after the
      // last collected day): the chart says so and draws no day before, rather than a flat 0.
      const known = await rawSql(L.store).query<{ n: bigint }>(
        `SELECT count(DISTINCT day) AS n FROM read_parquet('${join(r.dir, 'snapshot_storage.parquet')}') WHERE snapshots IS NOT NULL`,
      );
      for (const id of CHARTS) {
        if (id === 'snapshots') expect(charts[id]!.marks, 'snapshot days known').toBe(Number(known[0]!.n));
        else expect(charts[id]!.marks, `${id} has data`).toBeGreaterThan(0);
        expect(charts[id]!.marks, `${id} draws what it declares`).toBe(charts[id]!.declared);
      }
      expect(readFileSync(htmlPath, 'utf8')).toMatch(/Snapshots are known from \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
      const shot = await browser.send<{ data: string }>(
        'Page.captureScreenshot',
        { format: 'png', captureBeyondViewport: true },
        sessionId,
      );
      const png = Buffer.from(shot.data, 'base64');
      writeFileSync(join(r.dir, 'report.png'), png);
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(png.length).toBeGreaterThan(20_000);
      const pdf = await browser.send<{ data: string }>('Page.printToPDF', { printBackground: true }, sessionId);
      expect(Buffer.from(pdf.data, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
      expect(events.exceptions).toEqual([]);
      expect(events.consoleErrors).toEqual([]);
      expect(events.requests.filter((u) => !u.startsWith('file:') && !u.startsWith('data:'))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
