// The written files: Parquet and workbook hold the same rows, re-running gives the same Parquet
// bytes, text from the API stays text, the manifest describes the files, LibreOffice opens the
// workbook, a partial month is marked (or refused with requireComplete), and big sheets split.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReportIncompleteError, runReport, type ReportResult } from '../../src/report/run.js';
import { loadMonth, type Loaded } from '../support/month.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
let L: Loaded;
let first: ReportResult;

const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

beforeAll(async () => {
  L = await loadMonth({ month: MONTH });
  first = await runReport({ store: L.store, month: MONTH, outDir: join(L.dir, 'reports'), formats: ['parquet', 'xlsx'], priceBookPath: BOOK, now: new Date(L.now) });
});
afterAll(async () => {
  await L?.store.close();
});

function sameValue(parquet: unknown, excel: unknown): boolean {
  if (parquet === null || parquet === undefined) return excel === null || excel === undefined;
  if (parquet instanceof Date) return excel instanceof Date && excel.getTime() === parquet.getTime();
  if (typeof parquet === 'bigint') return excel === Number(parquet);
  if (typeof parquet === 'boolean') return excel === parquet;
  if (typeof parquet === 'string' && typeof excel === 'number') return /^-?\d+(\.\d+)?$/.test(parquet) && Number(parquet) === excel;
  return excel === parquet;
}

async function sheetRows(wb: ExcelJS.Workbook, base: string): Promise<{ header: string[]; rows: unknown[][]; total: unknown[] }> {
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
    expect(wb.worksheets.map((w) => w.name)).toEqual(['Summary', 'program_spend', 'framework_spend', 'snapshot_storage', 'transfer', 'About']);
    for (const f of first.files.filter((f) => f.path.endsWith('.parquet'))) {
      const name = f.path.split('/').at(-1)!.replace('.parquet', '');
      const pq = await L.store.query(`SELECT * FROM read_parquet('${f.path}') ORDER BY line_no`);
      expect(pq.length).toBe(f.rows);
      const { header, rows, total } = await sheetRows(wb, name);
      expect(header).toEqual(Object.keys(pq[0]!));
      expect(rows.length).toBe(pq.length);
      pq.forEach((r, i) => header.forEach((col, j) => {
        if (!sameValue(r[col], rows[i]![j])) expect.fail(`${name} row ${i + 1} ${col}: parquet ${String(r[col])} vs xlsx ${String(rows[i]![j])}`);
      }));
      const costCol = header.indexOf('cost');
      const sumCents = pq.reduce((a, r) => a + (r.cost === null ? 0n : BigInt((r.cost as string).replace('.', ''))), 0n);
      expect(Math.round((total[costCol] as number) * 100)).toBe(Number(sumCents));
      if (name === 'program_spend') expect(first.total).toBe((Number(sumCents) / 100).toFixed(2));
    }
  });

  test('Parquet columns are typed: ids VARCHAR, money DECIMAL(18,2), raw quantities exact', async () => {
    const path = first.files.find((f) => f.path.endsWith('program_spend.parquet'))!.path;
    const cols = await L.store.query<{ column_name: string; column_type: string }>(`DESCRIBE SELECT * FROM read_parquet('${path}')`);
    const t = Object.fromEntries(cols.map((c) => [c.column_name, c.column_type]));
    expect(t).toMatchObject({ org_id: 'VARCHAR', program_id: 'VARCHAR', period_id: 'VARCHAR', cost: 'DECIMAL(18,2)', rate: 'DECIMAL(18,6)',
      quantity_raw: 'DECIMAL(38,0)', quantity: 'DECIMAL(38,6)', billing_month: 'DATE', priced: 'BOOLEAN' });
    const meta = await L.store.query<{ compression: string }>(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`);
    expect(meta.map((m) => m.compression)).toEqual(['ZSTD']);
  });

  test('a program named =1+1 stays text in the workbook', async () => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(first.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    let seen = 0;
    for (const name of ['Summary', 'program_spend']) {
      wb.getWorksheet(name)!.eachRow((row) => row.eachCell((cell) => {
        if (cell.value === '=1+1') {
          expect(cell.type).toBe(ExcelJS.ValueType.String);
          seen++;
        }
        expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
      }));
    }
    expect(seen).toBeGreaterThanOrEqual(2);
  });

  test('re-running gives the same Parquet bytes and rows, and a manifest that describes the files', async () => {
    const again = await runReport({ store: L.store, month: MONTH, outDir: join(L.dir, 'reports'), formats: ['parquet', 'xlsx'], priceBookPath: BOOK, now: new Date(L.now + 3_600_000) });
    const pq = (r: ReportResult) => r.files.filter((f) => f.path.endsWith('.parquet')).map((f) => [f.path, f.rows, f.sha256]);
    expect(pq(again)).toEqual(pq(first));
    expect(again.total).toBe(first.total);
    const manifest = JSON.parse(readFileSync(join(again.dir, 'manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ status: 'COMPLETE', partial: false, granularity: 'daily', total: first.total, run_ids: ['run-test-1'],
      price_book: { revision: '2025-10-01.2' }, period: { month: MONTH } });
    expect(manifest.files.map((f: { name: string }) => f.name)).toEqual(
      ['framework_spend.parquet', 'program_spend.parquet', 'snapshot_storage.parquet', 'transfer.parquet', `usage-${MONTH}.xlsx`]);
    for (const f of manifest.files) expect(sha(join(again.dir, f.name))).toBe(f.sha256);
    // No temporary file is left behind.
    expect(readdirSync(again.dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  test('a second run with other formats adds to the manifest: it lists every file in the folder, each sha256 matching', async () => {
    const outDir = join(L.dir, 'merged');
    const a = await runReport({ store: L.store, month: MONTH, outDir, formats: ['parquet', 'xlsx'], priceBookPath: BOOK, now: new Date(L.now) });
    const b = await runReport({ store: L.store, month: MONTH, outDir, formats: ['focus'], priceBookPath: BOOK, now: new Date(L.now + 60_000) });
    expect(b.dir).toBe(a.dir);
    const manifest = JSON.parse(readFileSync(join(b.dir, 'manifest.json'), 'utf8'));
    const names = manifest.files.map((f: { name: string }) => f.name);
    // Every file of the folder but the manifest itself, whichever run wrote it.
    expect(names).toEqual(readdirSync(b.dir).filter((n) => n !== 'manifest.json').sort());
    expect(names).toEqual(
      ['focus-2025-10.parquet', 'framework_spend.parquet', 'program_spend.parquet', 'snapshot_storage.parquet', 'transfer.parquet', `usage-${MONTH}.xlsx`]);
    for (const f of manifest.files) expect(sha(join(b.dir, f.name)), f.name).toBe(f.sha256);
    const when = Object.fromEntries(manifest.files.map((f: { name: string; generated_at: string }) => [f.name, f.generated_at]));
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
      throw new Error('soffice (LibreOffice) is not on the PATH: install it with `apt-get update && apt-get install -y libreoffice-calc --no-install-recommends`');
    }
    const out = mkdtempSync(join(tmpdir(), 'lo-out-'));
    const profile = mkdtempSync(join(tmpdir(), 'lo-profile-'));
    const xlsx = first.files.find((f) => f.path.endsWith('.xlsx'))!.path;
    execFileSync(soffice, [`-env:UserInstallation=file://${profile}`, '--headless', '--convert-to', 'csv', '--outdir', out, xlsx], { timeout: 50_000, stdio: 'pipe' });
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
    await expect(runReport({ store: P.store, month: MONTH, outDir, formats: ['parquet', 'xlsx'], priceBookPath: BOOK, requireComplete: true }))
      .rejects.toBeInstanceOf(ReportIncompleteError);
    expect(existsSync(outDir)).toBe(false);
  });

  test('without it the reports are written and marked PARTIAL', async () => {
    const r = await runReport({ store: P.store, month: MONTH, outDir: join(P.dir, 'reports'), formats: ['parquet', 'xlsx'], priceBookPath: BOOK, now: new Date(P.now) });
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

  test('a report larger than a sheet continues on further sheets with the same rows', async () => {
    const r = await runReport({ store: L.store, month: MONTH, outDir: join(L.dir, 'split'), formats: ['parquet', 'xlsx'], priceBookPath: BOOK, maxRowsPerSheet: 100 });
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(r.dir, `usage-${MONTH}.xlsx`));
    const parts = wb.worksheets.filter((w) => w.name.startsWith('transfer'));
    expect(r.rows.transfer).toBeGreaterThan(250);
    expect(parts.length).toBe(Math.ceil(r.rows.transfer / 100));
    expect(parts[1]!.name).toBe('transfer (2)');
    const { rows } = await sheetRows(wb, 'transfer');
    expect(rows.length).toBe(r.rows.transfer);
    expect(rows.map((x) => x[0])).toEqual(Array.from({ length: r.rows.transfer }, (_, i) => i + 1));
  });
});
