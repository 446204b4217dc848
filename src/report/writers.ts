// The report's writers, one per format (report/run.ts runs them in order into the set's folder): each
// writes its file atomically (files.ts), checks the run's signal first, and lists the file with its
// rows and sha256; the manifest is written last, with the files of an earlier run carried into the set.
import { existsSync } from 'node:fs';
import { copyFile, link, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Granularity } from '../domain/granularity.js';
import type { Logger } from '../log.js';
import type { PriceBook } from '../billing/pricebook.js';
import type { Store } from '../store/store.js';
import type { FinalizedState } from '../store/report/finalize.js';
import { CORRECTIONS_TABLE } from '../store/report/finalize.js';
import type { ReportRange } from '../store/report/tables.js';
import { writeArrowFile } from './arrow.js';
import type { CoverageAssessment } from './coverage.js';
import { ALLOWANCE_RULE, GAUGE_RULE, ROUNDING_RULE, type ReportName } from './definitions.js';
import { sha256File, writeAtomically } from './files.js';
import { notEligibleLine } from './coverage.js';
import { FOCUS_LEFT_OUT_WHY, FOCUS_VERSION, focusLeftOutLine, type FocusBuild } from './focus.js';
import type { Forecast } from './forecast.js';
import { memoryFields } from './memoryLog.js';
import { TOP_PROGRAMS, renderReportHtml } from './html.js';
import type { ReportPeriod } from './period.js';
import type { OutputFormat } from '../domain/formats.js';
import { alertsSection } from './alertsHtml.js';
import { type AlertRecord } from '../store/alerts.js';
import {
  writeWorkbook,
  ROW_BUDGET,
  type AssumedSummary,
  type ColumnInfo,
  type SheetSource,
  type SummarisedReport,
} from './workbook.js';

/** Bars in the top-frameworks chart. */
const CHART_TOP_N = 10;
/** The charts file, beside the workbook that links to it. */
export const HTML_REPORT_NAME = 'report.html';

export interface ReportFile {
  /** Absolute or outDir-relative path as written. */
  path: string;
  rows: number;
  sha256: string;
}

/** What the staging step settled: the period, its coverage, the book, the report tables and FOCUS built. */
export interface StagedReport {
  period: ReportPeriod;
  formats: OutputFormat[];
  book: PriceBook;
  coverage: CoverageAssessment;
  partial: boolean;
  g: Granularity;
  params: ReportRange;
  warnings: string[];
  focus: FocusBuild | null;
  finalized: FinalizedState | null;
  corrections: { rows: number; amount: string } | null;
  /** The collection runs whose data the report reads, and where the period's data ends (a month's forecast). */
  runIds: string[];
  dataEnd: Date | null;
}

/** What the totals step read: each report's sheet source and rows, the total, run ids, assumed rates, the daily spend and forecast. */
export interface ReportTotals {
  sheets: SheetSource[];
  rows: Record<ReportName, number>;
  total: string;
  unpricedLines: number;
  runIds: string[];
  assumed: AssumedSummary;
  /** Program-days and programs of the detail (the HTML's row count and its Programs figure). */
  dailyShape: { dayRows: number; programs: number };
  forecast: Forecast | null;
}

/** Where a writer puts its file: the store, the set's folder, the files written so far, the log and the run's signal. */
export interface WriteTarget {
  store: Store;
  dir: string;
  files: ReportFile[];
  log: Logger;
  signal?: AbortSignal;
}

/** Writes one file of the set atomically and lists it with its rows and sha256. */
export async function writeSetFile(
  w: WriteTarget,
  name: string,
  rows: number | (() => number),
  write: (tmp: string) => Promise<void>,
  checkFirst = true,
): Promise<void> {
  const path = join(w.dir, name);
  if (checkFirst) w.signal?.throwIfAborted();
  await writeAtomically(path, write);
  w.files.push({ path, rows: typeof rows === 'number' ? rows : rows(), sha256: await sha256File(path) });
  await w.store.releaseMemory();
  w.log.debug('report file', { path: w.files.at(-1)!.path, ...(await memoryFields(w.store)) });
}

/** parquet: one file per report. */
export async function writeParquetFiles(w: WriteTarget, sheets: SheetSource[]): Promise<void> {
  for (const s of sheets)
    await writeSetFile(w, `${s.def.name}.parquet`, s.rows, (tmp) =>
      w.store.report.tables.copyTableToParquet(s.table, tmp),
    );
}

/** The corrections section of a finalised month, as a sheet source (and its Parquet file with parquet). */
export async function writeCorrections(
  w: WriteTarget,
  corrections: { rows: number; amount: string },
  parquet: boolean,
): Promise<SheetSource> {
  const columns = (await w.store.report.tables.tableColumns(CORRECTIONS_TABLE)).map((c): ColumnInfo => ({
    name: c.column_name,
    type: c.data_type,
  }));
  const sheet: SheetSource = {
    def: { name: 'corrections', title: 'Changes since finalisation' },
    table: CORRECTIONS_TABLE,
    columns,
    rows: corrections.rows,
    totalCost: corrections.amount,
    costColumn: 'cost_change',
  };
  if (parquet)
    await writeSetFile(w, 'corrections.parquet', corrections.rows, (tmp) =>
      w.store.report.tables.copyTableToParquet(CORRECTIONS_TABLE, tmp),
    );
  return sheet;
}

/** arrow: one Arrow IPC file per report. */
export async function writeArrowFiles(w: WriteTarget, sheets: SheetSource[]): Promise<void> {
  for (const s of sheets) {
    await writeSetFile(w, `${s.def.name}.arrow`, s.rows, async (tmp) => {
      await writeArrowFile(w.store, s.table, tmp);
    });
  }
}

/** focus: the FOCUS 1.2 Parquet file. */
export async function writeFocusFile(w: WriteTarget, focus: FocusBuild, label: string): Promise<void> {
  await writeSetFile(w, `focus-${label}.parquet`, focus.rows, (tmp) =>
    w.store.report.tables.copyFocusToParquet(focus.table, tmp),
  );
}

/** The alerts of a month's report (none for a range): the Alerts sheet, the HTML section, the manifest. */
async function monthAlerts(store: Store, period: ReportPeriod): Promise<AlertRecord[]> {
  return period.month === null ? [] : store.alerts.listAlerts(`${period.month}-01`);
}

/** html: the charts file. */
export async function writeHtmlFile(
  w: WriteTarget,
  st: StagedReport,
  t: ReportTotals,
  o: { title: string; now: Date },
): Promise<void> {
  const { period, partial, book, g } = st;
  const { total, unpricedLines, assumed, dailyShape, forecast } = t;
  const html = renderReportHtml({
    title: o.title,
    periodLabel: period.label,
    rangeStart: period.rangeStart,
    rangeEnd: period.rangeEnd,
    generatedAt: o.now,
    partial,
    currency: book.currency,
    total,
    granularity: g,
    priceBookRevision: book.revision,
    unpricedLines,
    assumed,
    programCount: dailyShape.programs,
    ...(await w.store.report.tables.chartData({ topPrograms: TOP_PROGRAMS, topFrameworks: CHART_TOP_N })),
    forecast,
    ...(await monthAlerts(w.store, period).then((a) => (a.length > 0 ? { alertsHtml: alertsSection(a) } : {}))),
  });
  w.signal?.throwIfAborted();
  await writeSetFile(w, HTML_REPORT_NAME, dailyShape.dayRows, (tmp) => writeFile(tmp, html), false);
}

/** xlsx: the workbook (summaries beyond the row budget); returns the reports it summarised. */
export async function writeWorkbookFile(
  w: WriteTarget,
  st: StagedReport,
  t: ReportTotals,
  o: {
    title: string;
    now: Date;
    correctionsSheet: SheetSource | null;
    rowBudget?: number;
    forecast: Forecast | null;
  },
): Promise<SummarisedReport[]> {
  const { period, partial, book, formats } = st;
  const { total, unpricedLines, assumed, sheets, forecast } = t;
  const { title, now, correctionsSheet } = o;
  const { store } = w;
  let summarised: SummarisedReport[] = [];
  const {
    byProgram: summaryByProgram,
    byMetric: summaryByMetric,
    programLabels,
  } = await store.report.tables.workbookSummary(period.rangeEnd);
  const alerts = await monthAlerts(store, period);
  let written = 0;
  w.signal?.throwIfAborted();
  await writeSetFile(
    w,
    `usage-${period.label}.xlsx`,
    () => written,
    async (tmp) => {
      const wb = await writeWorkbook(store, tmp, {
        title,
        partial,
        currency: book.currency,
        summaryByProgram,
        summaryByMetric,
        total,
        unpricedLines,
        assumed,
        programLabels,
        about: workbookAbout(st, t, now),
        rates: workbookRates(book),
        sheets,
        ...(correctionsSheet ? { corrections: correctionsSheet } : {}),
        ...(o.rowBudget !== undefined ? { rowBudget: o.rowBudget } : {}),
        ...(formats.includes('html') ? { chartsLink: HTML_REPORT_NAME } : {}),
        ...(forecast?.current ? { forecast } : {}),
        ...(alerts.length > 0 ? { alerts } : {}),
      });
      written = wb.rows;
      summarised = wb.summarised;
    },
    false,
  );
  return summarised;
}

/** The workbook's About sheet: period, coverage, prices, rules, warnings, finalisation, FOCUS, assumed rates. */
function workbookAbout(st: StagedReport, t: ReportTotals, now: Date): [string, string][] {
  const { period, partial, book, g, coverage, warnings, finalized, corrections, focus } = st;
  const { unpricedLines, assumed, runIds, sheets } = t;
  const coverageLines = coverage.scopes.map(
    (s) =>
      `${s.source} ${s.scope}: ${s.complete ? 'complete' : `${((100 * s.coveredMs) / s.rangeMs).toFixed(1)}% covered`}` +
      `${s.required ? '' : ' (not eligible; data comes from another source)'} [${s.statuses || 'no rows'}]`,
  );
  return [
    ['Period', period.month ?? period.label],
    ['Range (UTC, end exclusive)', `${period.rangeStart.toISOString()} to ${period.rangeEnd.toISOString()}`],
    ['Generated at', now.toISOString()],
    ['Coverage', partial ? 'PARTIAL' : 'COMPLETE'],
    ['Granularity used', `${g} (${coverage.reason})`],
    ['Complete granularities', coverage.completeGranularities.join(', ') || 'none'],
    ...coverageLines.map((l, i): [string, string] => [i === 0 ? 'Coverage by scope' : '', l]),
    ['Price book revision', book.revision],
    ['Price book file', `${book.path} (sha256 ${book.sha256})`],
    ['Currency', book.currency],
    ['Rounding rule', ROUNDING_RULE],
    ['Allowance rule', ALLOWANCE_RULE],
    ['Peak-billed metrics', GAUGE_RULE],
    ...warnings.map((w): [string, string] => ['Warning', w]),
    ...(finalized
      ? [
          [
            'Finalised',
            `${finalized.finalizationId}: the sheets hold the month as finalised; ` +
              `${corrections!.rows} correction(s) since, net ${corrections!.amount} ${book.currency} (sheet corrections)`,
          ] as [string, string],
        ]
      : []),
    [
      'Unpriced lines',
      `${unpricedLines} (a plan or metric without a rate: cost left blank, never 0 or guessed; UNPRICED on the Summary)`,
    ],
    ...(focus
      ? ([
          ['FOCUS file', `${focus.rows} rows, priced usage only; costs are an ${focus.costBasis} (column x_CostBasis)`],
          ['Left out of FOCUS', focusLeftOutLine(focus)],
        ] as [string, string][])
      : []),
    ...coverage.notEligible.map((org): [string, string] => ['Not eligible', notEligibleLine(org)]),
    [
      'Assumed rates',
      `${assumed.marked} rate(s) of the price book are marked assumed (column Assumed below); ` +
        `${assumed.amount} ${book.currency} of the total (${assumed.share}%) rests on the ${assumed.used.length} that priced this period`,
    ],
    ['Run ids', runIds.join(', ') || 'none'],
    ...sheets.map((s): [string, string] => [`Sheet ${s.def.name}`, `${s.def.title}; ${s.rows} rows`]),
  ];
}

/** The workbook's price book sheet: one row per rate. */
function workbookRates(book: PriceBook) {
  return book.rates.map((r) => ({
    rate_id: r.id,
    plan: r.plan,
    metric: r.metric,
    rate: r.rate,
    effective_from: r.effectiveFrom,
    effective_to: r.effectiveTo ?? '',
    source: r.source,
    assumed: r.assumed,
  }));
}

/**
 * Step 5, the manifest (written last: its presence means the month finished): the files this run
 * wrote, the earlier run's files carried into the set, coverage, prices, totals, finalisation, FOCUS.
 */
export async function writeManifest(
  w: WriteTarget,
  st: StagedReport,
  t: ReportTotals,
  o: {
    finalDir: string;
    now: Date;
    finalizedNow: string | null;
    summarised: SummarisedReport[];
    rowBudget?: number;
  },
) {
  const { dir, files } = w;
  const { period, partial, g, coverage, book, warnings, finalized, corrections, formats, focus } = st;
  const { total, unpricedLines, assumed, runIds, forecast } = t;
  const { finalDir, now, finalizedNow, summarised } = o;
  const manifestPath = join(dir, 'manifest.json');
  // A run may write only some formats (say `--format focus`) over a month an earlier run filled: the
  // earlier run's files that this run did not rewrite are carried into the new set (hard links, else
  // copies), and the manifest lists them with their own generation time and a sha256 recomputed from
  // the file, so the swapped-in set is the whole folder and its manifest describes every file.
  const writtenFiles = files.map((f) => ({
    name: f.path.slice(dir.length + 1),
    rows: f.rows,
    sha256: f.sha256,
    generated_at: now.toISOString(),
  }));
  w.signal?.throwIfAborted();
  const kept = await carryEarlierFiles(finalDir, dir, new Set(writtenFiles.map((f) => f.name)));
  const manifest = {
    period: {
      label: period.label,
      month: period.month,
      from: period.rangeStart.toISOString(),
      to: period.rangeEnd.toISOString(),
    },
    generated_at: now.toISOString(),
    status: partial ? 'PARTIAL' : 'COMPLETE',
    partial,
    granularity: g,
    coverage: manifestCoverage(coverage),
    price_book: { revision: book.revision, sha256: book.sha256, path: book.path, currency: book.currency },
    rounding: ROUNDING_RULE,
    allowance_rule: ALLOWANCE_RULE,
    warnings,
    finalized: finalized !== null || finalizedNow !== null,
    corrected: (corrections?.rows ?? 0) > 0,
    ...manifestFinalization(st, finalizedNow),
    total: total,
    unpriced_lines: unpricedLines,
    assumed_rates: manifestAssumedRates(assumed),
    ...(formats.includes('xlsx')
      ? {
          workbook: {
            row_budget: o.rowBudget ?? ROW_BUDGET,
            summarised: summarised.map((x) => ({ report: x.name, rows: x.rows, sheets: x.sheets })),
          },
        }
      : {}),
    run_ids: runIds,
    ...(await manifestAlerts(w.store, period)),
    ...(forecast ? { forecast: manifestForecast(forecast) } : {}),
    ...(focus ? { focus: manifestFocus(focus) } : {}),
    files: [...writtenFiles, ...kept].sort((a, b) => a.name.localeCompare(b.name)),
  };
  w.signal?.throwIfAborted();
  await writeAtomically(manifestPath, (tmp) => writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n'));
  files.push({ path: manifestPath, rows: files.length, sha256: await sha256File(manifestPath) });
  w.log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(w.store)) });
  return manifest;
}

/** The manifest's coverage: per scope, how much of the period the stored rows cover. */
function manifestCoverage(coverage: StagedReport['coverage']) {
  return {
    complete: coverage.complete,
    complete_granularities: coverage.completeGranularities,
    reason: coverage.reason,
    not_eligible: coverage.notEligible,
    scopes: coverage.scopes.map((s) => ({
      source: s.source,
      scope: s.scope,
      granularity: s.granularity,
      covered_ms: s.coveredMs,
      range_ms: s.rangeMs,
      complete: s.complete,
      required: s.required,
      statuses: s.statuses,
    })),
  };
}

/** The manifest's finalisation: the earlier one and its corrections since, or the one this run made. */
function manifestFinalization(st: StagedReport, finalizedNow: string | null) {
  const { finalized, corrections, formats } = st;
  return finalized
    ? {
        finalization: { id: finalized.finalizationId, files: finalized.files },
        corrections: {
          rows: corrections!.rows,
          net_amount: corrections!.amount,
          file: formats.includes('parquet') ? 'corrections.parquet' : null,
          sheet: formats.includes('xlsx') ? 'corrections' : null,
        },
      }
    : finalizedNow
      ? { finalization: { id: finalizedNow } }
      : {};
}

/** The manifest's assumed rates: how many the price book marks, and how much of the total rests on those used. */
function manifestAssumedRates(assumed: ReportTotals['assumed']) {
  return {
    marked: assumed.marked,
    amount: assumed.amount,
    share_percent: assumed.share,
    used: assumed.used.map((r) => ({ rate_id: r.rate_id, lines: r.lines, cost: r.cost })),
  };
}

/** The manifest's alerts of the month, when there are any. */
async function manifestAlerts(store: WriteTarget['store'], period: StagedReport['period']) {
  return monthAlerts(store, period).then((a) =>
    a.length > 0
      ? {
          alerts: a.map((x) => ({
            alert_id: x.alert_id,
            kind: x.kind,
            status: x.status,
            day: x.day ?? x.crossing_date,
            scope: `${x.scope_kind} ${x.scope_id}`,
            message: x.message,
          })),
        }
      : {},
  );
}

/** The manifest's forecast, labelled a projection. */
function manifestForecast(forecast: Forecast) {
  return {
    current: forecast.current,
    label: 'PROJECTION',
    as_of: forecast.asOf,
    complete_through: forecast.completeThrough,
    month_to_date: forecast.totals.monthToDate,
    projection: forecast.totals.projection,
    method: forecast.method,
  };
}

/** The manifest's FOCUS entry: what the FOCUS file holds, what it leaves out, and the finalisations it carries. */
function manifestFocus(focus: NonNullable<StagedReport['focus']>) {
  return {
    version: FOCUS_VERSION,
    rows: focus.rows,
    corrections: focus.corrections,
    billed_total: focus.billedTotal,
    cost_basis: focus.costBasis,
    left_out: {
      lines: focus.leftOut.lines,
      plans: focus.leftOut.plans,
      why: FOCUS_LEFT_OUT_WHY,
      by_plan: focus.leftOut.byPlan,
    },
    finalizations: [...focus.finalizations, ...(focus.finalized ? [focus.finalized] : [])].map((f) => ({
      id: f.finalizationId,
      finalized_at: f.finalizedAt,
      rows: f.rows,
      billed_total: f.billedTotal,
      rows_sha256: f.rowsSha256,
    })),
  };
}

interface ManifestFile {
  name: string;
  rows: number;
  sha256: string;
  generated_at: string;
}

/**
 * The files the month's current manifest lists that this run did not rewrite and that still exist, put into
 * the new set's folder (a hard link, else a copy) so that the swap keeps them; their manifest entries.
 */
async function carryEarlierFiles(finalDir: string, setDir: string, rewritten: Set<string>): Promise<ManifestFile[]> {
  let previous: { generated_at?: unknown; files?: unknown };
  try {
    previous = JSON.parse(await readFile(join(finalDir, 'manifest.json'), 'utf8')) as typeof previous;
  } catch {
    return []; // no earlier manifest (or an unreadable one): nothing to carry over
  }
  const out: ManifestFile[] = [];
  for (const f of Array.isArray(previous.files) ? (previous.files as Partial<ManifestFile>[]) : []) {
    // Only plain names inside the folder: a manifest never points elsewhere.
    if (
      typeof f.name !== 'string' ||
      f.name === 'manifest.json' ||
      rewritten.has(f.name) ||
      f.name !== basename(f.name) ||
      f.name.startsWith('.')
    )
      continue;
    const from = join(finalDir, f.name);
    if (!existsSync(from)) continue;
    const to = join(setDir, f.name);
    await link(from, to).catch(() => copyFile(from, to));
    rewritten.add(f.name);
    out.push({
      name: f.name,
      rows: typeof f.rows === 'number' ? f.rows : 0,
      sha256: await sha256File(to),
      generated_at: typeof f.generated_at === 'string' ? f.generated_at : String(previous.generated_at ?? ''),
    });
  }
  return out;
}
