// The Excel workbook, written with exceljs's streaming writer so that memory stays flat however
// large a report is: a Summary sheet, one sheet per report (split before Excel's row limit) and an
// About sheet. Text from the API is written as text, never as a formula.
import ExcelJS from 'exceljs';
import type { Store } from '../store/store.js';
import { quoteIdent, readSql } from '../store/sql.js';
import type { ReportDefinition } from './definitions.js';
import type { Forecast } from './forecast.js';

/** Excel's limit of rows per worksheet. */
export const EXCEL_MAX_ROWS = 1_048_576;
/** Excel's limit on a worksheet name's length. */
const EXCEL_MAX_SHEET_NAME = 31;
const PAGE_ROWS = 20_000;

export interface ColumnInfo {
  name: string;
  type: string;
}

export interface SheetSource {
  def: Pick<ReportDefinition, 'title' | 'sqlPath'> & { name: string };
  /** The money column the totals row sums (default 'cost'). */
  costColumn?: string;
  table: string;
  columns: ColumnInfo[];
  rows: number;
  totalCost: string;
}

export interface WorkbookContent {
  title: string;
  partial: boolean;
  currency: string;
  summaryByProgram: Record<string, unknown>[];
  summaryByMetric: Record<string, unknown>[];
  total: string;
  /** Key/value lines of the About sheet, then the rates table. */
  about: [string, string][];
  rates: { rate_id: string; plan: string; metric: string; rate: string; effective_from: string; effective_to: string; source: string }[];
  sheets: SheetSource[];
  /** A finalised month's changes since finalisation, written after the report sheets. */
  corrections?: SheetSource;
  /** Data rows per sheet before a report continues on another sheet; default leaves room for header and totals. */
  maxRowsPerSheet?: number;
  /** Relative link from the Summary sheet to the charts report (report.html), when one is written. */
  chartsLink?: string;
  /** A Forecast sheet after the Summary, for a period in progress. */
  forecast?: Forecast;
}

type Kind = 'text' | 'money' | 'decimal' | 'rawint' | 'int' | 'date' | 'timestamp' | 'bool';

function kindOf(type: string): Kind {
  if (type === 'DECIMAL(18,2)') return 'money';
  if (/^DECIMAL\(\d+,0\)$/.test(type)) return 'rawint';
  if (type.startsWith('DECIMAL')) return 'decimal';
  if (type === 'BIGINT' || type === 'INTEGER' || type === 'HUGEINT') return 'int';
  if (type === 'DATE') return 'date';
  if (type.startsWith('TIMESTAMP')) return 'timestamp';
  if (type === 'BOOLEAN') return 'bool';
  return 'text';
}

function moneyFormat(currency: string): string {
  return currency === 'USD' ? '"$"#,##0.00;-"$"#,##0.00' : `#,##0.00 "${currency}"`;
}

const FORMATS: Record<Exclude<Kind, 'money'>, string | undefined> = {
  text: '@',
  decimal: '#,##0.000000',
  rawint: '0',
  int: '0',
  date: 'yyyy-mm-dd',
  timestamp: 'yyyy-mm-dd hh:mm',
  bool: undefined,
};

function widthOf(name: string, kind: Kind): number {
  const base =
    kind === 'money' ? 14 : kind === 'decimal' ? 18 : kind === 'rawint' ? 24 : kind === 'int' ? 9 :
    kind === 'date' ? 12 : kind === 'timestamp' ? 17 : kind === 'bool' ? 8 :
    name === 'note' ? 48 : /(^|_)id$|name$/.test(name) ? 30 : 18;
  return Math.max(base, name.length + 2);
}

/** A cell value for exceljs: exact decimals become numbers only for display; raw integers beyond 2^53 stay text. */
function cellValue(v: unknown, kind: Kind): ExcelJS.CellValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'money':
    case 'decimal':
      return Number(v as string);
    case 'rawint': {
      const n = Number(v as string);
      return Number.isSafeInteger(n) ? n : String(v);
    }
    case 'int':
      return typeof v === 'bigint' ? Number(v) : (v as number);
    case 'date':
    case 'timestamp':
      return v as Date;
    case 'bool':
      return v as boolean;
    default:
      // A string is always a string cell: exceljs only writes formulas from {formula} objects.
      return String(v);
  }
}

function sheetName(base: string, part: number): string {
  const suffix = part > 1 ? ` (${part})` : '';
  return base.slice(0, EXCEL_MAX_SHEET_NAME - suffix.length) + suffix;
}

const BOLD = { bold: true } as const;
const HEADER_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFDDE4EE' } };

async function writeReportSheets(wb: ExcelJS.stream.xlsx.WorkbookWriter, store: Store, src: SheetSource, c: WorkbookContent): Promise<number> {
  const kinds = src.columns.map((col) => kindOf(col.type));
  const perSheet = c.maxRowsPerSheet ?? EXCEL_MAX_ROWS - 2;
  const parts = Math.max(1, Math.ceil(src.rows / perSheet));
  const pageSql = readSql('src/report/sql/page.sql').replace('{{table}}', quoteIdent(src.table));
  const costCol = src.columns.findIndex((col) => col.name === (src.costColumn ?? 'cost'));
  let written = 0;
  for (let part = 1; part <= parts; part++) {
    // For print: landscape, fit to one page wide, the header row repeated on every page.
    const ws = wb.addWorksheet(sheetName(src.def.name, part), {
      views: [{ state: 'frozen', ySplit: 1 }],
      pageSetup: { orientation: 'landscape', fitToPage: true, fitToWidth: 1, fitToHeight: 0, printTitlesRow: '1:1' },
    });
    ws.columns = src.columns.map((col, i) => {
      const kind = kinds[i]!;
      const numFmt = kind === 'money' ? moneyFormat(c.currency) : FORMATS[kind];
      return { header: col.name, key: col.name, width: widthOf(col.name, kind), ...(numFmt ? { style: { numFmt } } : {}) };
    });
    const header = ws.getRow(1);
    header.font = BOLD;
    header.fill = HEADER_FILL;
    header.commit();
    const from = (part - 1) * perSheet;
    const to = Math.min(src.rows, part * perSheet);
    for (let after = from; after < to; after += PAGE_ROWS) {
      const rows = await store.query(pageSql, { after: BigInt(after), upto: BigInt(Math.min(to, after + PAGE_ROWS)) });
      for (const r of rows) {
        ws.addRow(src.columns.map((col, i) => cellValue(r[col.name], kinds[i]!))).commit();
        written++;
      }
    }
    const lastDataRow = 1 + (to - from);
    ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: Math.max(1, lastDataRow), column: src.columns.length } };
    if (part === parts) {
      const totals: ExcelJS.CellValue[] = src.columns.map(() => null);
      totals[1] = parts > 1 ? 'Total (all sheets of this report)' : 'Total';
      if (costCol >= 0) totals[costCol] = Number(src.totalCost);
      const row = ws.addRow(totals);
      row.font = BOLD;
      row.commit();
    }
    await ws.commit();
  }
  return written;
}

async function writeSummary(wb: ExcelJS.stream.xlsx.WorkbookWriter, c: WorkbookContent): Promise<void> {
  const ws = wb.addWorksheet('Summary');
  const money = moneyFormat(c.currency);
  ws.columns = [{ width: 34 }, { width: 34 }, { width: 30 }, { width: 22 }, { width: 18 }, { width: 18 }, { width: 16 }];
  const add = (values: ExcelJS.CellValue[], o: { bold?: boolean; fill?: boolean; moneyCols?: number[]; decimalCols?: number[] } = {}) => {
    const row = ws.addRow(values);
    if (o.bold) row.font = BOLD;
    if (o.fill) row.fill = HEADER_FILL;
    for (const i of o.moneyCols ?? []) row.getCell(i).numFmt = money;
    for (const i of o.decimalCols ?? []) row.getCell(i).numFmt = '#,##0.000000';
    row.commit();
  };
  add([c.title], { bold: true });
  add([c.partial ? 'PARTIAL: the period is not completely collected; see About for coverage' : 'Complete: every scope of the period is collected'], { bold: c.partial });
  if (c.chartsLink !== undefined) {
    // A relative hyperlink, so it works wherever the report folder is copied.
    const row = ws.addRow([{ text: `Charts: ${c.chartsLink} (open in a browser)`, hyperlink: c.chartsLink }]);
    row.getCell(1).font = { color: { argb: 'FF0563C1' }, underline: true };
    row.commit();
  } else add([]);
  add(['Totals by program'], { bold: true });
  add(['org_id', 'program_id', 'program_name', 'plans', 'cost', 'unpriced_lines'], { bold: true, fill: true });
  for (const r of c.summaryByProgram) {
    add([cellValue(r.org_id, 'text'), cellValue(r.program_id, 'text'), cellValue(r.program_name, 'text'), cellValue(r.plans, 'text'),
      Number(r.cost as string), Number(r.unpriced_lines as bigint)], { moneyCols: [5] });
  }
  add(['Total', null, null, null, Number(c.total)], { bold: true, moneyCols: [5] });
  add([]);
  add(['Totals by metric'], { bold: true });
  add(['api_version', 'metric', 'billing_unit', 'quantity', 'billable_quantity', 'cost', 'unpriced_lines'], { bold: true, fill: true });
  for (const r of c.summaryByMetric) {
    add([cellValue(r.api_version, 'text'), cellValue(r.metric, 'text'), cellValue(r.billing_unit, 'text'),
      Number(r.quantity as string), Number(r.billable_quantity as string), Number(r.cost as string), Number(r.unpriced_lines as bigint)],
      { moneyCols: [6], decimalCols: [4, 5] });
  }
  add(['Total', null, null, null, null, Number(c.total)], { bold: true, moneyCols: [6] });
  await ws.commit();
}

async function writeForecast(wb: ExcelJS.stream.xlsx.WorkbookWriter, c: WorkbookContent, f: Forecast): Promise<void> {
  const ws = wb.addWorksheet('Forecast', { views: [{ state: 'frozen', ySplit: 7 }] });
  const money = moneyFormat(c.currency);
  ws.columns = [{ width: 30 }, { width: 34 }, { width: 18 }, { width: 20 }, { width: 18 }, { width: 20 }];
  const text = (values: ExcelJS.CellValue[], bold = false) => {
    const row = ws.addRow(values);
    if (bold) row.font = BOLD;
    row.commit();
  };
  text(['Month-end forecast: a PROJECTION, not a bill'], true);
  text(['Method', f.method]);
  text(['As of', `${f.asOf}; complete days through ${f.completeThrough}`]);
  text(['Days', `${f.completeDays} complete of ${f.daysInPeriod}; ${f.remainingDays} remaining; trend over the last ${f.windowDays}`]);
  text([]);
  text([]);
  const head = ws.addRow(['program_id', 'program_name', 'month_to_date', 'complete_days_spend', 'daily_trend', 'projected_total']);
  head.font = BOLD;
  head.fill = HEADER_FILL;
  head.commit();
  for (const p of f.programs) {
    const row = ws.addRow([cellValue(p.programId, 'text'), cellValue(p.programName, 'text'), Number(p.monthToDate), Number(p.completeDaysSpend),
      Number(p.dailyTrend), p.projection === null ? null : Number(p.projection)]);
    for (const i of [3, 4, 6]) row.getCell(i).numFmt = money;
    row.getCell(5).numFmt = '#,##0.0000';
    row.commit();
  }
  const total = ws.addRow(['Total (projection)', null, Number(f.totals.monthToDate), Number(f.totals.completeDaysSpend), null,
    f.totals.projection === null ? null : Number(f.totals.projection)]);
  total.font = BOLD;
  for (const i of [3, 4, 6]) total.getCell(i).numFmt = money;
  total.commit();
  await ws.commit();
}

async function writeAbout(wb: ExcelJS.stream.xlsx.WorkbookWriter, c: WorkbookContent): Promise<void> {
  const ws = wb.addWorksheet('About');
  ws.columns = [{ width: 28 }, { width: 28 }, { width: 30 }, { width: 12 }, { width: 14 }, { width: 14 }, { width: 90 }];
  for (const [k, v] of c.about) {
    const row = ws.addRow([k, v]);
    row.getCell(1).font = BOLD;
    row.commit();
  }
  ws.addRow([]).commit();
  const head = ws.addRow(['rate_id', 'plan', 'metric', 'rate', 'effective_from', 'effective_to', 'source']);
  head.font = BOLD;
  head.fill = HEADER_FILL;
  head.commit();
  for (const r of c.rates) {
    ws.addRow([r.rate_id, r.plan, r.metric, r.rate, r.effective_from, r.effective_to, r.source]).commit();
  }
  await ws.commit();
}

/** Writes the workbook to `path` (the caller renames it into place). Returns the data rows written. */
export async function writeWorkbook(store: Store, path: string, c: WorkbookContent): Promise<number> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
  wb.creator = 'usage-pipeline';
  await writeSummary(wb, c);
  if (c.forecast) await writeForecast(wb, c, c.forecast);
  let rows = 0;
  for (const s of c.sheets) rows += await writeReportSheets(wb, store, s, c);
  if (c.corrections) await writeReportSheets(wb, store, c.corrections, c);
  await writeAbout(wb, c);
  await wb.commit();
  return rows;
}
