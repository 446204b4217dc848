// The Excel workbook, for people, written with exceljs's streaming writer so that memory stays flat
// however large a report is: a Summary sheet, one sheet per report and an About sheet. Headers are
// words (the Parquet files keep the machine names), programs are named (deleted ones flagged), months
// show as months, numbers are numbers; every sheet prints landscape, one page wide, with its header
// row repeated and a print area. A report beyond the row budget (a sheet a person can open) is
// carried as summaries (by program, by program and metric, by day) that point to its Parquet file.
// Text from the API is written as text, never as a formula.
import type { AlertRecord } from '../store/alerts.js';
import ExcelJS from 'exceljs';
import type { ReportTable, SheetTable, SummaryPart, SummaryTable } from '../store/report/tables.js';
import type { Store } from '../store/store.js';
import { collectPageGarbage } from '../heap.js';
import type { ReportDefinition } from './definitions.js';
import type { Forecast } from './forecast.js';
import { columnLabel } from './labels.js';
import { sheetCaughtUp } from './sheetBacklog.js';

/** Excel's limit of rows per worksheet. */
export const EXCEL_MAX_ROWS = 1_048_576;
/**
 * Data rows a report may have on its own sheet: beyond it the workbook carries its summaries and the
 * Parquet file the lines (a sheet of 100,000 rows still opens in seconds; millions do not).
 */
export const ROW_BUDGET = 100_000;
/** 2^53: beyond it a quantity in the workbook is a close approximation; Parquet keeps it exact. */
const EXACT_LIMIT = '9,007,199,254,740,992 (2^53)';
/** Excel's limit on a worksheet name's length. */
const EXCEL_MAX_SHEET_NAME = 31;
/**
 * Lines read from DuckDB at a time: a page is held as row objects while its rows are written, so a
 * larger page grows V8's heap (ARCHITECTURE.md, "Reports", "Memory").
 */
const PAGE_ROWS = 5_000;
/** Rows written between two waits for the zip (sheetBacklog.ts): exceljs hands rows over without backpressure. */
const PACE_ROWS = 500;

export interface ColumnInfo {
  name: string;
  type: string;
}

export interface SheetSource {
  def: Pick<ReportDefinition, 'title'> & { name: string };
  /** The money column the totals row sums (default 'cost'). */
  costColumn?: string;
  table: SheetTable;
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
  rates: {
    rate_id: string;
    plan: string;
    metric: string;
    rate: string;
    effective_from: string;
    effective_to: string;
    source: string;
    assumed: boolean;
  }[];
  sheets: SheetSource[];
  /** A finalised month's changes since finalisation, written after the report sheets. */
  corrections?: SheetSource;
  /** Data rows a report may have on its own sheet (default ROW_BUDGET); beyond it, summaries. */
  rowBudget?: number;
  /** The name people read for each program id (deleted programs flagged); ids not here show their name column. */
  programLabels: Map<string, string>;
  unpricedLines: number;
  /** The rates the price book marks assumed that priced lines of the period, and what rests on them. */
  assumed: AssumedSummary;
  /** Relative link from the Summary sheet to the charts report (report.html), when one is written. */
  chartsLink?: string;
  /** A Forecast sheet after the Summary, for a period in progress. */
  forecast?: Forecast;
  /** The month's alerts, on an Alerts sheet after the Summary (writeAlertsSheet). */
  alerts?: readonly AlertRecord[];
}

export interface AssumedSummary {
  /** Rates marked assumed in the price book (all of them, used or not). */
  marked: number;
  /** Those that priced lines of the period, with the cost of those lines. */
  used: { rate_id: string; plan: string; metric: string; rate: string; lines: number; cost: string }[];
  /** The cost resting on assumed rates, and its share of the total (percent, 2 decimals). */
  amount: string;
  share: string;
}

/** What the workbook says about a report it carries as summaries rather than lines. */
export interface SummarisedReport {
  name: string;
  rows: number;
  sheets: string[];
}

type Kind = 'text' | 'money' | 'decimal' | 'rawint' | 'int' | 'date' | 'month' | 'timestamp' | 'bool';

function kindOf(type: string, name = ''): Kind {
  if (type === 'DECIMAL(18,2)') return 'money';
  if (type === 'DATE' && /month$/.test(name)) return 'month';
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
  rawint: '#,##0',
  int: '#,##0',
  date: 'yyyy-mm-dd',
  month: 'mmm yyyy',
  timestamp: 'yyyy-mm-dd hh:mm',
  bool: undefined,
};

function widthOf(name: string, kind: Kind): number {
  const base =
    kind === 'money'
      ? 14
      : kind === 'decimal'
        ? 18
        : kind === 'rawint'
          ? 24
          : kind === 'int'
            ? 9
            : kind === 'date' || kind === 'month'
              ? 12
              : kind === 'timestamp'
                ? 17
                : kind === 'bool'
                  ? 8
                  : name === 'note'
                    ? 48
                    : /(^|_)id$|name$/.test(name)
                      ? 30
                      : 18;
  return Math.max(base, name.length + 2);
}

/**
 * A cell value for exceljs: exact decimals become numbers for display. Raw integers stay numbers too
 * (a number column sorts and sums): beyond 2^53 Excel holds 15 significant digits, so those cells are
 * close approximations and the exact integers are in the Parquet files (the About sheet says so).
 */
function cellValue(v: unknown, kind: Kind): ExcelJS.CellValue {
  if (v === null || v === undefined) return null;
  switch (kind) {
    case 'money':
    case 'decimal':
    case 'rawint':
      return Number(v);
    case 'int':
      return typeof v === 'bigint' ? Number(v) : (v as number);
    case 'date':
    case 'month':
    case 'timestamp':
      return v as Date;
    case 'bool':
      return v as boolean;
    default:
      // A string is always a string cell: exceljs only writes formulas from {formula} objects.
      return String(v);
  }
}

const BOLD = { bold: true } as const;
/** For print: landscape, fit to one page wide (as many pages tall as needed), the header row repeated. */
const PRINT: Partial<ExcelJS.PageSetup> = {
  orientation: 'landscape',
  fitToPage: true,
  fitToWidth: 1,
  fitToHeight: 0,
  paperSize: 9,
};

function columnLetter(n: number): string {
  let s = '';
  for (let i = n; i > 0; i = Math.floor((i - 1) / 26)) s = String.fromCharCode(65 + ((i - 1) % 26)) + s;
  return s;
}

/** Sets the print area once the sheet's size is known (exceljs writes it into the workbook's defined names). */
function printArea(ws: ExcelJS.Worksheet, lastRow: number, lastColumn: number): void {
  ws.pageSetup.printArea = `A1:${columnLetter(Math.max(1, lastColumn))}${Math.max(1, lastRow)}`;
}
const HEADER_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFDDE4EE' } };

/** The program column written with the label people read (deleted programs flagged), from the row's id. */
function programLabel(r: Record<string, unknown>, c: WorkbookContent): unknown {
  const id = r.program_id;
  return typeof id === 'string' ? (c.programLabels.get(id) ?? r.program_name ?? id) : r.program_name;
}

async function writeTableSheet(
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  store: Store,
  o: {
    name: string;
    table: ReportTable;
    columns: ColumnInfo[];
    rows: number;
    costColumn: string;
    totalCost: string | null;
    /** Lines after the totals row (a summary's pointer to the Parquet file). */
    after?: string[];
    /** A summary's line_no only pages it; it is not a line of the report. */
    hideLineNo?: boolean;
  },
  c: WorkbookContent,
): Promise<number> {
  const columns = o.columns.filter((col) => !(o.hideLineNo && col.name === 'line_no'));
  const kinds = columns.map((col) => kindOf(col.type, col.name));
  const costCol = columns.findIndex((col) => col.name === o.costColumn);
  const ws = wb.addWorksheet(o.name.slice(0, EXCEL_MAX_SHEET_NAME), {
    views: [{ state: 'frozen', ySplit: 1 }],
    pageSetup: { ...PRINT, printTitlesRow: '1:1' },
  });
  ws.columns = columns.map((col, i) => {
    const kind = kinds[i]!;
    const numFmt = kind === 'money' ? moneyFormat(c.currency) : FORMATS[kind];
    const header = columnLabel(col.name);
    return { header, key: col.name, width: widthOf(header, kind), ...(numFmt ? { style: { numFmt } } : {}) };
  });
  const header = ws.getRow(1);
  header.font = BOLD;
  header.fill = HEADER_FILL;
  header.commit();
  let written = 0;
  for (let after = 0; after < o.rows; after += PAGE_ROWS) {
    const rows = await store.report.tables.reportPage(o.table, after, Math.min(o.rows, after + PAGE_ROWS));
    collectPageGarbage();
    for (const r of rows) {
      ws.addRow(
        columns.map((col, i) =>
          col.name === 'program_name' ? cellValue(programLabel(r, c), 'text') : cellValue(r[col.name], kinds[i]!),
        ),
      ).commit();
      if (++written % PACE_ROWS === 0) await sheetCaughtUp(ws);
    }
  }
  ws.autoFilter = { from: { row: 1, column: 1 }, to: { row: Math.max(1, 1 + written), column: columns.length } };
  let lastRow = 1 + written;
  if (o.totalCost !== null) {
    const totals: ExcelJS.CellValue[] = columns.map(() => null);
    totals[costCol > 0 ? 0 : Math.min(1, columns.length - 1)] = 'Total';
    if (costCol >= 0) totals[costCol] = Number(o.totalCost);
    const row = ws.addRow(totals);
    row.font = BOLD;
    row.commit();
    lastRow++;
  }
  for (const line of o.after ?? []) {
    ws.addRow([line]).commit();
    lastRow++;
  }
  printArea(ws, lastRow, columns.length);
  ws.commit();
  return written;
}

/** The grouping column of a report's summary by day: its day, else its month. */
function dayColumn(columns: ColumnInfo[]): string | null {
  for (const name of ['day', 'usage_day', 'billing_month']) if (columns.some((c) => c.name === name)) return name;
  return null;
}

/**
 * Summaries of a report too large for a sheet, as TEMP tables beside it: by program, by program and
 * metric, by day. Quantities are summed in their own units (DECIMAL columns), cost is the sum of the
 * report's (already allocated) cents, so every summary adds up to the report's total.
 */
async function summarise(
  store: Store,
  src: SheetSource,
): Promise<{ suffix: string; table: SummaryTable; columns: ColumnInfo[]; rows: number }[]> {
  const has = (n: string) => src.columns.some((c) => c.name === n);
  const costCol = src.costColumn ?? 'cost';
  const day = dayColumn(src.columns);
  const groupings: { suffix: string; part: SummaryPart; keys: string[] }[] = [
    { suffix: 'by program', part: 'by_program', keys: ['org_id', 'program_id'] },
    ...(has('metric')
      ? [{ suffix: 'by metric', part: 'by_metric' as const, keys: ['org_id', 'program_id', 'metric'] }]
      : []),
    ...(day ? [{ suffix: 'by day', part: 'by_day' as const, keys: [day] }] : []),
  ];
  const out = [];
  for (const g of groupings) {
    const table: SummaryTable = `${src.table}__${g.part}`;
    const t = await store.report.tables.summariseTable({
      table,
      source: src.table,
      columns: src.columns,
      costColumn: costCol,
      keys: g.keys,
    });
    const columns = t.columns.map((c): ColumnInfo => ({ name: c.column_name, type: c.data_type }));
    out.push({ suffix: g.suffix, table, columns, rows: t.rows });
  }
  return out;
}

/** Writes a report as one sheet, or as its summaries when it is beyond the row budget. */
async function writeReport(
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  store: Store,
  src: SheetSource,
  c: WorkbookContent,
  summarised: SummarisedReport[],
): Promise<number> {
  const budget = Math.min(c.rowBudget ?? ROW_BUDGET, EXCEL_MAX_ROWS - 2);
  const costColumn = src.costColumn ?? 'cost';
  if (src.rows <= budget) {
    return writeTableSheet(
      wb,
      store,
      {
        name: src.def.name,
        table: src.table,
        columns: src.columns,
        rows: src.rows,
        costColumn,
        totalCost: src.totalCost,
      },
      c,
    );
  }
  const parts = await summarise(store, src);
  const note =
    `${src.def.title}: ${src.rows.toLocaleString('en-US')} lines, more than the ${budget.toLocaleString('en-US')} a sheet carries here; ` +
    `every line is in ${src.def.name}.parquet (same columns, machine names).`;
  const sheets: string[] = [];
  for (const p of parts) {
    const name = `${src.def.name} ${p.suffix}`;
    sheets.push(name);
    await writeTableSheet(
      wb,
      store,
      {
        name,
        table: p.table,
        columns: p.columns,
        rows: Math.min(p.rows, budget),
        costColumn,
        totalCost: src.totalCost,
        after: [note],
        hideLineNo: true,
      },
      c,
    );
  }
  summarised.push({ name: src.def.name, rows: src.rows, sheets });
  return 0;
}

/** Options of one Summary row: bold, header fill, money or decimal columns, a font colour. */
interface SummaryRowStyle {
  bold?: boolean;
  fill?: boolean;
  moneyCols?: number[];
  decimalCols?: number[];
  color?: string;
}

/** The Summary sheet being written: its money format, and the rows written so far (for pacing and the print area). */
interface SummarySheet {
  ws: ExcelJS.Worksheet;
  money: string;
  rows: number;
  add(values: ExcelJS.CellValue[], o?: SummaryRowStyle): void;
}

const RED = 'FFC00000';

async function writeSummary(
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  c: WorkbookContent,
  summarised: SummarisedReport[],
): Promise<void> {
  const ws = wb.addWorksheet('Summary', { pageSetup: { ...PRINT } });
  const money = moneyFormat(c.currency);
  ws.columns = [
    { width: 34 },
    { width: 34 },
    { width: 36 },
    { width: 22 },
    { width: 18 },
    { width: 18 },
    { width: 16 },
    { width: 14 },
  ];
  const sheet: SummarySheet = {
    ws,
    money,
    rows: 0,
    add: (values, o = {}) => {
      const row = ws.addRow(values);
      if (o.bold || o.color) row.font = { ...(o.bold ? BOLD : {}), ...(o.color ? { color: { argb: o.color } } : {}) };
      if (o.fill) row.fill = HEADER_FILL;
      for (const i of o.moneyCols ?? []) row.getCell(i).numFmt = money;
      for (const i of o.decimalCols ?? []) row.getCell(i).numFmt = '#,##0.000000';
      row.commit();
      sheet.rows++;
    },
  };
  writeSummaryHead(sheet, c, summarised);
  await writeProgramTotals(sheet, c);
  writeMetricTotals(sheet, c);
  writeAssumedRates(sheet, c);
  printArea(ws, sheet.rows, 8);
  ws.commit();
}

/** The Summary's head: title, completeness, the charts link, the total, unpriced and assumed warnings, summarised reports. */
function writeSummaryHead(sheet: SummarySheet, c: WorkbookContent, summarised: SummarisedReport[]): void {
  const { ws, add } = sheet;
  add([c.title], { bold: true });
  add(
    [
      c.partial
        ? 'PARTIAL: the period is not completely collected; see About for coverage'
        : 'Complete: every scope of the period is collected',
    ],
    { bold: c.partial },
  );
  if (c.chartsLink !== undefined) {
    // A relative hyperlink, so it works wherever the report folder is copied.
    const row = ws.addRow([{ text: `Charts: ${c.chartsLink} (open in a browser)`, hyperlink: c.chartsLink }]);
    row.getCell(1).font = { color: { argb: 'FF0563C1' }, underline: true };
    row.commit();
    sheet.rows++;
  } else add([]);
  add(['Total', null, null, null, Number(c.total)], { bold: true, moneyCols: [5] });
  if (c.unpricedLines > 0) {
    add(
      [
        `UNPRICED: ${c.unpricedLines.toLocaleString('en-US')} line(s) have no rate in the price book (plan or metric without a rate): ` +
          'their cost is blank, not 0, and not in any total',
      ],
      { bold: true, color: RED },
    );
  } else add(['Unpriced lines: none (every line has a rate)']);
  const a = c.assumed;
  if (a.used.length > 0) {
    add(
      [
        `ASSUMED RATES: ${formatAmount(a.amount, c.currency)} of the total (${a.share}%) rests on ${a.used.length} of the ${a.marked} rate(s) ` +
          'the price book marks assumed (not quoted from a published or contracted price): see "Rates marked assumed" below',
      ],
      { bold: true, color: RED },
    );
  } else add([`Assumed rates: none of the ${a.marked} rate(s) the price book marks assumed priced this period`]);
  for (const s of summarised) {
    add([
      `${s.name}: ${s.rows.toLocaleString('en-US')} lines, summarised on sheets ${s.sheets.join(', ')}; every line is in ${s.name}.parquet`,
    ]);
  }
}

/** The Summary's totals by program (paced: an organisation may have many programs). */
async function writeProgramTotals(sheet: SummarySheet, c: WorkbookContent): Promise<void> {
  const { ws, add } = sheet;
  add([]);
  add(['Totals by program'], { bold: true });
  add(['Organization', 'Program id', 'Program', 'Plans', 'Cost', 'Unpriced lines', 'Unpriced'], {
    bold: true,
    fill: true,
  });
  for (const r of c.summaryByProgram) {
    if (sheet.rows % PACE_ROWS === 0) await sheetCaughtUp(ws);
    const unpriced = Number(r.unpriced_lines);
    add(
      [
        cellValue(r.org_id, 'text'),
        cellValue(r.program_id, 'text'),
        cellValue(programLabel(r, c), 'text'),
        cellValue(r.plans, 'text'),
        r.cost === null ? null : Number(r.cost),
        unpriced,
        unpriced > 0 ? 'UNPRICED' : null,
      ],
      { moneyCols: [5] },
    );
  }
  add(['Total', null, null, null, Number(c.total), c.unpricedLines], { bold: true, moneyCols: [5] });
}

/** The Summary's totals by metric. */
function writeMetricTotals(sheet: SummarySheet, c: WorkbookContent): void {
  const { add } = sheet;
  add([]);
  add(['Totals by metric'], { bold: true });
  add(['API', 'Metric', 'Billing unit', 'Quantity', 'Billable quantity', 'Cost', 'Unpriced lines', 'Unpriced'], {
    bold: true,
    fill: true,
  });
  for (const r of c.summaryByMetric) {
    const unpriced = Number(r.unpriced_lines);
    add(
      [
        cellValue(r.api_version, 'text'),
        cellValue(r.metric, 'text'),
        cellValue(r.billing_unit, 'text'),
        Number(r.quantity),
        Number(r.billable_quantity),
        r.cost === null ? null : Number(r.cost),
        unpriced,
        unpriced > 0 ? 'UNPRICED' : null,
      ],
      { moneyCols: [6], decimalCols: [4, 5] },
    );
  }
  add(['Total', null, null, null, null, Number(c.total), c.unpricedLines], { bold: true, moneyCols: [6] });
}

/** The Summary's rates marked assumed that priced this period, and how much of the total rests on them. */
function writeAssumedRates(sheet: SummarySheet, c: WorkbookContent): void {
  const { ws, money, add } = sheet;
  const a = c.assumed;
  add([]);
  add(['Rates marked assumed'], { bold: true });
  add(['Rate id', 'Plan', 'Metric', 'Rate', 'Lines', 'Cost'], { bold: true, fill: true });
  for (const r of a.used) {
    const row = ws.addRow([r.rate_id, r.plan, r.metric, Number(r.rate), r.lines, Number(r.cost)]);
    row.getCell(4).numFmt = '0.000000';
    row.getCell(6).numFmt = money;
    row.commit();
    sheet.rows++;
  }
  add(['Resting on assumed rates', null, null, null, null, Number(a.amount)], { bold: true, moneyCols: [6] });
  add([`Share of the total: ${a.share}%`]);
}

/** An exact decimal string as money for a sentence. */
function formatAmount(amount: string, currency: string): string {
  const neg = amount.startsWith('-');
  const [i, f = ''] = (neg ? amount.slice(1) : amount).split('.');
  const body = `${i!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${f.padEnd(2, '0').slice(0, 2)}`;
  return `${neg ? '-' : ''}${currency} ${body}`;
}

async function writeForecast(wb: ExcelJS.stream.xlsx.WorkbookWriter, c: WorkbookContent, f: Forecast): Promise<void> {
  const ws = wb.addWorksheet('Forecast', {
    views: [{ state: 'frozen', ySplit: 7 }],
    pageSetup: { ...PRINT, printTitlesRow: '7:7' },
  });
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
  text([
    'Days',
    `${f.completeDays} complete of ${f.daysInPeriod}; ${f.remainingDays} remaining; trend over the last ${f.windowDays}`,
  ]);
  text([]);
  text([]);
  const head = ws.addRow([
    'Program id',
    'Program',
    'Month to date',
    'Spend of complete days',
    'Daily trend',
    'Projected total',
  ]);
  head.font = BOLD;
  head.fill = HEADER_FILL;
  head.commit();
  for (const [i, p] of f.programs.entries()) {
    if (i % PACE_ROWS === 0) await sheetCaughtUp(ws);
    const row = ws.addRow([
      cellValue(p.programId, 'text'),
      cellValue(c.programLabels.get(p.programId) ?? p.programName, 'text'),
      Number(p.monthToDate),
      Number(p.completeDaysSpend),
      Number(p.dailyTrend),
      p.projection === null ? null : Number(p.projection),
    ]);
    for (const i of [3, 4, 6]) row.getCell(i).numFmt = money;
    row.getCell(5).numFmt = '#,##0.0000';
    row.commit();
  }
  const total = ws.addRow([
    'Total (projection)',
    null,
    Number(f.totals.monthToDate),
    Number(f.totals.completeDaysSpend),
    null,
    f.totals.projection === null ? null : Number(f.totals.projection),
  ]);
  total.font = BOLD;
  for (const i of [3, 4, 6]) total.getCell(i).numFmt = money;
  total.commit();
  printArea(ws, 8 + f.programs.length, 6);
  ws.commit();
}

async function writeAbout(wb: ExcelJS.stream.xlsx.WorkbookWriter, c: WorkbookContent): Promise<void> {
  const ws = wb.addWorksheet('About', { pageSetup: { ...PRINT } });
  ws.columns = [
    { width: 28 },
    { width: 28 },
    { width: 30 },
    { width: 12 },
    { width: 14 },
    { width: 14 },
    { width: 10 },
    { width: 90 },
  ];
  let rows = 0;
  const about: [string, string][] = [
    ...c.about,
    [
      'Quantities in API units',
      `Shown as numbers; above ${EXACT_LIMIT} a spreadsheet keeps 15 significant digits, so those cells are ` +
        'close approximations: the exact integers are in the Parquet files.',
    ],
    [
      'Column names',
      "The sheets use words; the Parquet files use the machine names (program_name, quantity_raw, ...), as the analysts' queries do.",
    ],
    [
      'Row budget',
      `A report of more than ${(c.rowBudget ?? ROW_BUDGET).toLocaleString('en-US')} lines is carried as summaries (by program, by program and metric, by day); its lines are in its Parquet file.`,
    ],
  ];
  for (const [k, v] of about) {
    const row = ws.addRow([k, v]);
    row.getCell(1).font = BOLD;
    row.commit();
    rows++;
  }
  ws.addRow([]).commit();
  const head = ws.addRow(['Rate id', 'Plan', 'Metric', 'Rate', 'Effective from', 'Effective to', 'Assumed', 'Source']);
  head.font = BOLD;
  head.fill = HEADER_FILL;
  head.commit();
  rows += 2;
  const date = (d: string) => (d ? new Date(`${d}T00:00:00Z`) : null);
  for (const r of c.rates) {
    const row = ws.addRow([
      r.rate_id,
      r.plan,
      r.metric,
      Number(r.rate),
      date(r.effective_from),
      date(r.effective_to),
      r.assumed ? 'ASSUMED' : null,
      r.source,
    ]);
    row.getCell(4).numFmt = '0.000000';
    row.getCell(5).numFmt = 'yyyy-mm-dd';
    row.getCell(6).numFmt = 'yyyy-mm-dd';
    row.commit();
    rows++;
  }
  printArea(ws, rows, 8);
  ws.commit();
}

/** The Alerts sheet: every alert of the month (budgets and anomalies), its numbers, rule and status. */
async function writeAlertsSheet(
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  c: WorkbookContent,
  alerts: readonly AlertRecord[],
): Promise<void> {
  const ws = wb.addWorksheet('Alerts', {
    views: [{ state: 'frozen', ySplit: 3 }],
    pageSetup: { ...PRINT, printTitlesRow: '3:3' },
  });
  const money = moneyFormat(c.currency);
  const title = ws.addRow([
    `Alerts: ${alerts.length}, ${alerts.filter((a) => a.status === 'open').length} open. ` +
      "Budgets: ACTUAL month-to-date and FORECASTED month-end thresholds; anomalies: a program's day against its own baseline. " +
      'The per-metric columns of an anomaly add up to its impact.',
  ]);
  title.font = BOLD;
  title.commit();
  ws.addRow([]).commit();
  const cats = ['compute', 'storage', 'instant_restore', 'snapshots', 'transfer', 'extra_branches', 'other'] as const;
  const head = ws.addRow([
    'Alert id',
    'Status',
    'Kind',
    'Rule',
    'Month',
    'Day',
    'Crossing date',
    'Scope',
    'Scope id',
    'Organization',
    'Program',
    'Threshold %',
    'Budget',
    'Threshold',
    'Expected',
    'Actual',
    'Impact',
    'Impact %',
    'Score',
    ...cats.map((k) => `Impact: ${k.replace('_', ' ')}`),
    'Message',
    'Fired at',
    'Superseded',
  ]);
  head.font = BOLD;
  head.fill = HEADER_FILL;
  head.commit();
  const num = (v: string | null) => (v === null ? null : Number(v));
  for (const a of alerts) {
    const row = ws.addRow([
      a.alert_id,
      a.status,
      a.kind,
      `${a.rule} v${a.rule_version}`,
      a.month.slice(0, 7),
      a.day,
      a.crossing_date,
      a.scope_kind,
      a.scope_id,
      a.org_name ?? a.org_id,
      a.program_name ?? a.program_id,
      a.threshold_pct,
      num(a.budget_usd),
      num(a.threshold_usd),
      num(a.expected_usd),
      num(a.actual_usd),
      num(a.impact_usd),
      num(a.impact_pct),
      a.score,
      ...cats.map((k) => num(a[`${k}_usd`])),
      a.message,
      a.fired_at.toISOString(),
      a.superseded_at ? `${a.superseded_at.toISOString()}: ${a.superseded_reason ?? ''}` : null,
    ]);
    for (const i of [13, 14, 15, 16, 17, 20, 21, 22, 23, 24, 25, 26]) row.getCell(i).numFmt = money;
    row.commit();
  }
  printArea(ws, 3 + alerts.length, 29);
  ws.commit();
}

/** Writes the workbook to `path` (the caller renames it into place). Returns the data rows written and what was summarised. */
export async function writeWorkbook(
  store: Store,
  path: string,
  c: WorkbookContent,
): Promise<{ rows: number; summarised: SummarisedReport[] }> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
  wb.creator = 'usage-pipeline';
  // Which reports are summarised is known before the Summary (the first sheet) says so.
  const budget = Math.min(c.rowBudget ?? ROW_BUDGET, EXCEL_MAX_ROWS - 2);
  const planned: SummarisedReport[] = c.sheets
    .filter((s) => s.rows > budget)
    .map((s) => ({ name: s.def.name, rows: s.rows, sheets: [] }));
  const summarised: SummarisedReport[] = [];
  for (const p of planned) {
    const src = c.sheets.find((s) => s.def.name === p.name)!;
    const cols = new Set(src.columns.map((x) => x.name));
    p.sheets = [
      'by program',
      ...(cols.has('metric') ? ['by metric'] : []),
      ...(dayColumn(src.columns) ? ['by day'] : []),
    ].map((x) => `${p.name} ${x}`);
  }
  await writeSummary(wb, c, planned);
  if (c.forecast) await writeForecast(wb, c, c.forecast);
  if (c.alerts) await writeAlertsSheet(wb, c, c.alerts);
  let rows = 0;
  for (const s of c.sheets) rows += await writeReport(wb, store, s, c, summarised);
  if (c.corrections) await writeReport(wb, store, c.corrections, c, summarised);
  await writeAbout(wb, c);
  await wb.commit();
  return { rows, summarised };
}
