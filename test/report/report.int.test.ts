// The written files: Parquet and workbook hold the same rows, re-running gives the same Parquet
// bytes, text from the API stays text, the manifest describes the files, LibreOffice opens the
// workbook, a partial month is marked (or refused with requireComplete), and big sheets split.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReportIncompleteError, runReport, type ReportResult } from '../../src/report/run.js';
import { columnLabel } from '../../src/report/labels.js';
import { loadMonth, type Loaded } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
let L: Loaded;
let first: ReportResult;

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

beforeAll(async () => {
  L = await loadMonth({ month: MONTH });
  first = await runReport({
    store: L.store,
    month: MONTH,
    outDir: join(L.dir, 'reports'),
    formats: ['parquet', 'xlsx'],
    priceBookPath: BOOK,
    now: new Date(L.now),
  });
});
afterAll(async () => {
  await L?.store.close();
});

function sameValue(parquet: unknown, excel: unknown): boolean {
  if (parquet === null || parquet === undefined) return excel === null || excel === undefined;
  if (parquet instanceof Date) return excel instanceof Date && excel.getTime() === parquet.getTime();
  if (typeof parquet === 'bigint') return excel === Number(parquet);
  if (typeof parquet === 'boolean') return excel === parquet;
  if (typeof parquet === 'string' && typeof excel === 'number')
    return /^-?\d+(\.\d+)?$/.test(parquet) && Number(parquet) === excel;
  return excel === parquet;
}

async function sheetRows(
  wb: ExcelJS.Workbook,
  base: string,
): Promise<{ header: string[]; rows: unknown[][]; total: unknown[] }> {
  const sheets = wb.worksheets.filter((w) => w.name === base || w.name.startsWith(`${base} (`));
  const out: unknown[][] = [];
  let header: string[] = [];
  let total: unknown[] = [];
  sheets.forEach((ws, si) => {
    header = (ws.getRow(1).values as unknown[]).slice(1).map(String);
    const last = ws.rowCount;
    for (let i = 2; i <= last; i++) {
      const values = (ws.getRow(i).values as unknown[]).slice(1);
      const row = header.map((_, j) => values[j] ?? null);
      if (si === sheets.length - 1 && i === last) total = row;
      else out.push(row);
    }
  });
  return { header, rows: out, total };
}

describe('a complete month', () => {
  test('the Parquet files and the workbook hold the same rows; totals rows are the sums of the lines', async () => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(first.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    expect(wb.worksheets.map((w) => w.name)).toEqual([
      'Summary',
      'program_spend',
      'framework_spend',
      'snapshot_storage',
      'transfer',
      'About',
    ]);
    for (const f of first.files.filter((f) => f.path.endsWith('.parquet'))) {
      const name = f.path.split('/').at(-1)!.replace('.parquet', '');
      const pq = await rawSql(L.store).query(`SELECT * FROM read_parquet('${f.path}') ORDER BY line_no`);
      expect(pq.length).toBe(f.rows);
      const { header, rows, total } = await sheetRows(wb, name);
      // Words in the workbook, machine names in Parquet, column for column.
      const names = Object.keys(pq[0]!);
      expect(header).toEqual(names.map(columnLabel));
      expect(header).toContain('Quantity in API units');
      expect(rows.length).toBe(pq.length);
      pq.forEach((r, i) =>
        names.forEach((col, j) => {
          const x = rows[i]![j];
          // The program column carries the name people read: the inventory's, flagged when deleted.
          const same =
            col === 'program_name'
              ? typeof x === 'string' && x.startsWith(String(r[col] ?? r.program_id))
              : sameValue(r[col], x);
          if (!same) expect.fail(`${name} row ${i + 1} ${col}: parquet ${String(r[col])} vs xlsx ${String(x)}`);
        }),
      );
      const costCol = names.indexOf('cost');
      const sumCents = pq.reduce(
        (a, r) => a + (r.cost === null ? 0n : BigInt((r.cost as string).replace('.', ''))),
        0n,
      );
      expect(Math.round((total[costCol] as number) * 100)).toBe(Number(sumCents));
      if (name === 'program_spend') expect(first.total).toBe((Number(sumCents) / 100).toFixed(2));
    }
  });

  test('Parquet columns are typed: ids VARCHAR, money DECIMAL(18,2), raw quantities exact', async () => {
    const path = first.files.find((f) => f.path.endsWith('program_spend.parquet'))!.path;
    const cols = await rawSql(L.store).query<{ column_name: string; column_type: string }>(
      `DESCRIBE SELECT * FROM read_parquet('${path}')`,
    );
    const t = Object.fromEntries(cols.map((c) => [c.column_name, c.column_type]));
    expect(t).toMatchObject({
      org_id: 'VARCHAR',
      program_id: 'VARCHAR',
      period_id: 'VARCHAR',
      cost: 'DECIMAL(18,2)',
      rate: 'DECIMAL(18,6)',
      quantity_raw: 'DECIMAL(38,0)',
      quantity: 'DECIMAL(38,6)',
      billing_month: 'DATE',
      priced: 'BOOLEAN',
    });
    const meta = await rawSql(L.store).query<{ compression: string }>(
      `SELECT DISTINCT compression FROM parquet_metadata('${path}')`,
    );
    expect(meta.map((m) => m.compression)).toEqual(['ZSTD']);
  });

  test('a program named =1+1 stays text in the workbook', async () => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(first.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    let seen = 0;
    for (const name of ['Summary', 'program_spend']) {
      wb.getWorksheet(name)!.eachRow((row) =>
        row.eachCell((cell) => {
          if (cell.value === '=1+1') {
            expect(cell.type).toBe(ExcelJS.ValueType.String);
            seen++;
          }
          expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
        }),
      );
    }
    expect(seen).toBeGreaterThanOrEqual(2);
  });

  test('re-running gives the same Parquet bytes and rows, and a manifest that describes the files', async () => {
    const again = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'reports'),
      formats: ['parquet', 'xlsx'],
      priceBookPath: BOOK,
      now: new Date(L.now + 3_600_000),
    });
    const pq = (r: ReportResult) =>
      r.files.filter((f) => f.path.endsWith('.parquet')).map((f) => [f.path, f.rows, f.sha256]);
    expect(pq(again)).toEqual(pq(first));
    expect(again.total).toBe(first.total);
    const manifest = JSON.parse(readFileSync(join(again.dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({
      status: 'COMPLETE',
      partial: false,
      granularity: 'daily',
      total: first.total,
      run_ids: ['run-test-1'],
      price_book: { revision: '2025-10-01.3' },
      period: { month: MONTH },
    });
    expect(manifest.files.map((f: { name: string }) => f.name)).toEqual([
      'framework_spend.parquet',
      'program_spend.parquet',
      'snapshot_storage.parquet',
      'transfer.parquet',
      `usage-${MONTH}.xlsx`,
    ]);
    for (const f of manifest.files) expect(sha(join(again.dir, f.name))).toBe(f.sha256);
    // No temporary file is left behind.
    expect(readdirSync(again.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('a second run with other formats adds to the manifest: it lists every file in the folder, each sha256 matching', async () => {
    const outDir = join(L.dir, 'merged');
    const a = await runReport({
      store: L.store,
      month: MONTH,
      outDir,
      formats: ['parquet', 'xlsx'],
      priceBookPath: BOOK,
      now: new Date(L.now),
    });
    const b = await runReport({
      store: L.store,
      month: MONTH,
      outDir,
      formats: ['focus'],
      priceBookPath: BOOK,
      now: new Date(L.now + 60_000),
    });
    expect(b.dir).toBe(a.dir);
    const manifest = JSON.parse(readFileSync(join(b.dir, 'manifest.json'), 'utf8'));
    const names = manifest.files.map((f: { name: string }) => f.name);
    // Every file of the folder but the manifest itself, whichever run wrote it.
    expect(names).toEqual(
      readdirSync(b.dir)
        .filter((n) => n !== 'manifest.json')
        .sort(),
    );
    expect(names).toEqual([
      'focus-2025-10.parquet',
      'framework_spend.parquet',
      'program_spend.parquet',
      'snapshot_storage.parquet',
      'transfer.parquet',
      `usage-${MONTH}.xlsx`,
    ]);
    for (const f of manifest.files) expect(sha(join(b.dir, f.name)), f.name).toBe(f.sha256);
    const when = Object.fromEntries(
      manifest.files.map((f: { name: string; generated_at: string }) => [f.name, f.generated_at]),
    );
    expect(when['focus-2025-10.parquet']).toBe(new Date(L.now + 60_000).toISOString());
    expect(when['program_spend.parquet']).toBe(new Date(L.now).toISOString());
    // The rows of the files kept from the first run are still theirs.
    const rowsOf = (name: string) => manifest.files.find((f: { name: string }) => f.name === name).rows;
    expect(rowsOf('program_spend.parquet')).toBe(a.files.find((f) => f.path.endsWith('program_spend.parquet'))!.rows);
  });

  test('the workbook opens in LibreOffice (headless conversion to CSV)', () => {
    let soffice: string;
    try {
      soffice = execFileSync('sh', ['-c', 'command -v soffice'], { encoding: 'utf8' }).trim();
    } catch {
      throw new Error(
        'soffice (LibreOffice) is not on the PATH: install it with `apt-get update && apt-get install -y libreoffice-calc --no-install-recommends`',
      );
    }
    const out = mkdtempSync(join(tmpdir(), 'lo-out-'));
    const profile = mkdtempSync(join(tmpdir(), 'lo-profile-'));
    const xlsx = first.files.find((f) => f.path.endsWith('.xlsx'))!.path;
    execFileSync(
      soffice,
      [`-env:UserInstallation=file://${profile}`, '--headless', '--convert-to', 'csv', '--outdir', out, xlsx],
      { timeout: 50_000, stdio: 'pipe' },
    );
    const csv = readFileSync(join(out, `usage-${MONTH}.csv`), 'utf8');
    expect(csv).toContain(`Usage and spend, ${MONTH}`);
    expect(csv).toContain('=1+1');
    expect(csv).toMatch(/Total/);
  });
});

describe('a partial month', () => {
  let P: Loaded;
  beforeAll(async () => {
    P = await loadMonth({ month: MONTH, skipOrg: true });
  });
  afterAll(async () => {
    await P?.store.close();
  });

  test('with requireComplete it throws and writes nothing', async () => {
    const outDir = join(P.dir, 'strict');
    await expect(
      runReport({
        store: P.store,
        month: MONTH,
        outDir,
        formats: ['parquet', 'xlsx'],
        priceBookPath: BOOK,
        requireComplete: true,
      }),
    ).rejects.toBeInstanceOf(ReportIncompleteError);
    expect(existsSync(outDir)).toBe(false);
  });

  test('without it the reports are written and marked PARTIAL', async () => {
    const r = await runReport({
      store: P.store,
      month: MONTH,
      outDir: join(P.dir, 'reports'),
      formats: ['parquet', 'xlsx'],
      priceBookPath: BOOK,
      now: new Date(P.now),
    });
    expect(r.partial).toBe(true);
    expect(r.coverage.scopes.some((s) => s.required && !s.complete && s.statuses === 'failed')).toBe(true);
    // Legacy organisations are not eligible on v2: listed, but they do not make the month partial by themselves.
    expect(r.coverage.scopes.some((s) => !s.required && s.statuses === 'not_eligible')).toBe(true);
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.status).toBe('PARTIAL');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, `usage-${MONTH}.xlsx`));
    expect(String(wb.getWorksheet('Summary')!.getCell('A1').value)).toContain('PARTIAL');
    expect(String(wb.getWorksheet('Summary')!.getCell('A2').value)).toContain('PARTIAL');
  });

  test('a report beyond the row budget is carried as summaries that add up to it and point to its Parquet file', async () => {
    const r = await runReport({
      store: L.store,
      month: MONTH,
      outDir: join(L.dir, 'budget'),
      formats: ['parquet', 'xlsx'],
      priceBookPath: BOOK,
      rowBudget: 100,
    });
    expect(r.rows.transfer).toBeGreaterThan(100);
    expect(r.summarised.map((s) => s.name)).toContain('transfer');
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, `usage-${MONTH}.xlsx`));
    const names = wb.worksheets.map((w) => w.name);
    expect(names).not.toContain('transfer');
    expect(names).toEqual(expect.arrayContaining(['transfer by program', 'transfer by metric', 'transfer by day']));
    const pq = join(r.dir, 'transfer.parquet');
    const exact = await rawSql(L.store).query<{ program_id: string; cents: bigint }>(
      `SELECT program_id, CAST(round(sum(coalesce(cost, 0)) * 100) AS BIGINT) AS cents FROM read_parquet('${pq}') GROUP BY program_id ORDER BY program_id`,
    );
    const byDay = await rawSql(L.store).query<{ n: bigint }>(
      `SELECT count(DISTINCT day) AS n FROM read_parquet('${pq}')`,
    );
    for (const sheet of ['transfer by program', 'transfer by metric', 'transfer by day']) {
      const { header, rows, total } = await sheetRows(wb, sheet);
      const cost = header.indexOf('Cost');
      // The last rows are the totals row and the pointer to the Parquet file.
      // The last rows: the totals row, then the pointer to the Parquet file.
      const data = rows.slice(0, -1);
      const totals = rows.at(-1)!;
      expect(totals[0]).toBe('Total');
      expect(String(total[0])).toContain('transfer.parquet');
      const cents = (x: unknown[]) => Math.round(((x[cost] as number | null) ?? 0) * 100);
      const sum = data.reduce((a, x) => a + cents(x), 0);
      expect(Math.round((totals[cost] as number) * 100)).toBe(sum);
      expect(sum, sheet).toBe(exact.reduce((a, x) => a + Number(x.cents), 0));
      if (sheet === 'transfer by program') {
        const pid = header.indexOf('Program id');
        expect(new Map(data.map((x) => [x[pid], cents(x)]))).toEqual(
          new Map(exact.map((x) => [x.program_id, Number(x.cents)])),
        );
      }
      if (sheet === 'transfer by day') expect(data.length).toBe(Number(byDay[0]!.n));
    }
    const summary: string[] = [];
    wb.getWorksheet('Summary')!.eachRow((row) => summary.push(String(row.getCell(1).value)));
    expect(summary.some((l) => l.includes('transfer') && l.includes('transfer.parquet'))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(r.dir, 'manifest.json'), 'utf8'));
    expect(manifest.workbook.summarised.map((x: { report: string }) => x.report)).toContain('transfer');
  });

  test('the workbook is for people: words for headers, months as months, rates as numbers, print setup on every sheet', async () => {
    const wb = new ExcelJS.Workbook();
    const path = first.files.find((f) => f.path.endsWith('.xlsx'))!.path;
    await wb.xlsx.readFile(path);
    const ps = wb.getWorksheet('program_spend')!;
    const header = (ps.getRow(1).values as unknown[]).slice(1).map(String);
    expect(header).not.toContain('period_plan');
    expect(header).not.toContain('quantity_raw');
    const month = ps.getRow(2).getCell(header.indexOf('Month') + 1);
    expect(month.value).toBeInstanceOf(Date);
    expect(month.numFmt).toBe('mmm yyyy');
    // Every sheet prints landscape, one page wide, with a print area; report sheets repeat their header.
    // Read from the file's zip in process: a fresh machine has no unzip.
    const xml = await (await JSZip.loadAsync(readFileSync(path))).file('xl/workbook.xml')!.async('string');
    wb.worksheets.forEach((ws, i) => {
      expect(ws.pageSetup.orientation, ws.name).toBe('landscape');
      expect(ws.pageSetup.fitToWidth, ws.name).toBe(1);
      expect(xml, ws.name).toMatch(
        new RegExp(
          `<definedName name="_xlnm.Print_Area" localSheetId="${i}">&apos;${ws.name}&apos;!\\$A1:\\$[A-Z]+\\d+</definedName>`,
        ),
      );
    });
    for (const name of ['program_spend', 'framework_spend', 'snapshot_storage', 'transfer'])
      expect(xml).toContain(`&apos;${name}&apos;!$1:$1`);
    // Rates on About are numbers, and the assumed ones are marked.
    const about = wb.getWorksheet('About')!;
    let rates = 0;
    let assumed = 0;
    about.eachRow((row) => {
      if (
        typeof row.getCell(4).value === 'number' &&
        typeof row.getCell(1).value === 'string' &&
        String(row.getCell(1).value).includes('/')
      ) {
        rates++;
        if (row.getCell(7).value === 'ASSUMED') assumed++;
      }
    });
    expect(rates).toBeGreaterThan(40);
    expect(assumed).toBe(23);
    // Deleted programs are named and flagged on the Summary.
    const deleted = await rawSql(L.store).query<{ name: string }>(
      'SELECT name FROM programs WHERE deleted_at IS NOT NULL AND program_id IN (SELECT program_id FROM usage_program)',
    );
    expect(deleted.length).toBeGreaterThan(0);
    const summaryText: string[] = [];
    wb.getWorksheet('Summary')!.eachRow((row) => row.eachCell((c) => summaryText.push(String(c.value))));
    for (const d of deleted) expect(summaryText).toContain(`${d.name} (deleted)`);
  });

  test('the Summary states the unpriced lines and how much of the total rests on assumed rates', async () => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(first.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    const lines: unknown[][] = [];
    wb.getWorksheet('Summary')!.eachRow((row) => lines.push((row.values as unknown[]).slice(1)));
    const pq = first.files.find((f) => f.path.endsWith('program_spend.parquet'))!.path;
    const [u] = await rawSql(L.store).query<{ n: bigint }>(
      `SELECT count(*) AS n FROM read_parquet('${pq}') WHERE NOT priced`,
    );
    const [a] = await rawSql(L.store).query<{ cost: string }>(
      `SELECT CAST(coalesce(sum(cost), 0) AS VARCHAR) AS cost FROM read_parquet('${pq}') WHERE list_contains($ids, rate_id)`,
      { ids: first.assumed.used.map((x) => x.rate_id) },
    );
    expect(first.unpricedLines).toBe(Number(u!.n));
    // The demo world has an enterprise program (no rates) and legacy programs (assumed rates).
    expect(first.unpricedLines).toBeGreaterThan(0);
    expect(first.assumed.used.length).toBeGreaterThan(0);
    const top = lines.slice(0, 8).map((l) => String(l[0]));
    if (Number(u!.n) > 0) expect(top.some((l) => l.startsWith(`UNPRICED: ${Number(u!.n)} line(s)`))).toBe(true);
    else expect(top).toContain('Unpriced lines: none (every line has a rate)');
    expect(first.assumed.marked).toBe(23);
    expect(first.assumed.amount).toBe(a!.cost);
    if (first.assumed.used.length > 0) {
      expect(top.some((l) => l.startsWith('ASSUMED RATES:') && l.includes(`(${first.assumed.share}%)`))).toBe(true);
      const share = (Number(a!.cost) * 100) / Number(first.total);
      expect(Math.abs(Number(first.assumed.share) - share)).toBeLessThan(0.006);
    }
    // A program whose lines are all unpriced has a blank cost, never 0.
    const [allUnpriced] = await rawSql(L.store).query<{ n: bigint }>(
      `SELECT count(*) AS n FROM (SELECT program_id FROM read_parquet('${pq}') GROUP BY program_id HAVING bool_and(NOT priced))`,
    );
    const blanks = lines.filter((l) => l[6] === 'UNPRICED' && (l[4] === null || l[4] === undefined)).length;
    expect(blanks).toBeGreaterThanOrEqual(Number(allUnpriced!.n));
  });
});
