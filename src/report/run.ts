// `report`: prices a period's usage with the price book and writes one Parquet file per report,
// the workbook and manifest.json under outDir/<period>/. The set is written into a fresh hidden folder
// beside it (files.ts), the earlier run's other files carried over, the manifest last, and swapped in
// whole: a crash or a signal leaves the previous set or the new one. With requireComplete a partial
// period fails before anything is written.
import { existsSync } from 'node:fs';
import { copyFile, link, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { type Granularity } from '../domain/granularity.js';
import { silentLogger, type Logger } from '../log.js';
import { loadPriceBook, type PriceBook } from '../billing/pricebook.js';
import { refreshPrices } from './prices.js';
import type { Store } from '../store/store.js';
import { keepInsertionOrder, reportSettings, restoreSettings, setAllocator, setMemoryLimit, setThreads } from '../store/report/settings.js';
import {
  assumedRateUse, chartData, copyFocusToParquet, copyTableToParquet, dailySpend, dataEnd, moneyTotals, rateChangesInside, reportRunIds,
  tableColumns, workbookSummary, type ReportRange,
} from '../store/report/tables.js';
import { assessCoverage, type CoverageAssessment } from './coverage.js';
import { ALLOWANCE_RULE, GAUGE_RULE, REPORTS, ROUNDING_RULE, reportTable, type ReportName } from './definitions.js';
import { cleanReportLeftovers, freshSetDir, freshStageDir, sha256File, swapInSet, writeAtomically } from './files.js';
import { computeForecast, type DailyProgramSpend, type Forecast } from './forecast.js';
import { FOCUS_VERSION, assertFinalizable, buildFocus, recordFinalization, type FocusBuild, type FocusIdentity } from './focus.js';
import { TOP_PROGRAMS, renderReportHtml, type HtmlReportInput } from './html.js';
import { writeArrowFile } from './arrow.js';
import { resolvePeriod } from './period.js';
import { CONFIG_DEFAULTS } from '../config/schema.js';
import { materialiseReports } from '../store/report/stages.js';
import { writeWorkbook, ROW_BUDGET, type AssumedSummary, type ColumnInfo, type SheetSource, type SummarisedReport } from './workbook.js';
import { CORRECTIONS_TABLE, applyFinalized, finalizedState, recordFinalizedFiles, type FinalizedState } from '../store/report/finalize.js';

/**
 * With monthly data only, a rate that changes inside the period cannot be applied (each bucket is the
 * whole month): one warning line per such rate. Collect daily data for the month to price it exactly.
 */
async function monthlyRateChangeWarnings(store: Store, params: ReportRange): Promise<string[]> {
  const rows = await rateChangesInside(store, params);
  return rows.map((r) =>
    `WARNING: rate ${r.rate_id} (${r.plan}, ${r.metric}) starts or ends inside the period ` +
    `(${r.effective_from.toISOString().slice(0, 10)}..${r.effective_to ? r.effective_to.toISOString().slice(0, 10) : 'open'}), ` +
    'but only monthly data is complete: each month is priced at the rate in force at its start. ' +
    'Collect daily data for the period (usage-pipeline collect --granularity daily) to price the change.');
}

/** What of the total rests on the rates the price book marks assumed: amount and share (percent, 2 decimals, exact). */
async function assumedRates(store: Store, ids: string[], total: string): Promise<AssumedSummary> {
  const used = ids.length === 0 ? [] : (await assumedRateUse(store, ids)).map((r) => ({ ...r, lines: Number(r.lines) }));
  const cents = (v: string) => BigInt(v.replace('.', ''));
  const amountCents = used.reduce((a, r) => a + cents(r.cost), 0n);
  const totalCents = cents(total);
  // Share in hundredths of a percent, rounded half-up.
  const bp = totalCents === 0n ? 0n : (amountCents * 20000n + totalCents) / (2n * totalCents);
  const amount = `${amountCents < 0n ? '-' : ''}${(amountCents < 0n ? -amountCents : amountCents) / 100n}.${String((amountCents < 0n ? -amountCents : amountCents) % 100n).padStart(2, '0')}`;
  return { marked: ids.length, used, amount, share: `${bp / 100n}.${String(bp % 100n).padStart(2, '0')}` };
}

export { OUTPUT_FORMATS, REPORT_FORMATS, type OutputFormat, type ReportFormat } from '../domain/formats.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../domain/formats.js';
/** Bars in the top-frameworks chart. */
const CHART_TOP_N = 10;
/** The charts file, beside the workbook that links to it. */
export const HTML_REPORT_NAME = 'report.html';

export interface RunReportOptions {
  store: Store;
  /** YYYY-MM; or from/to. */
  month?: string;
  from?: string;
  to?: string;
  outDir: string;
  formats: readonly OutputFormat[];
  priceBookPath: string;
  /** An operator's partial price book laid over priceBookPath (see loadPriceBook). */
  priceOverlayPath?: string;
  requireComplete?: boolean;
  now?: Date;
  log?: Logger;
  /** Stops the run between files (SIGINT/SIGTERM): the month's previous set stays as it was. */
  signal?: AbortSignal;
  /** DuckDB's memory limit while the report runs (config report.memory_limit, default from the config schema); only ever lowers the store's. */
  memoryLimit?: string;
  /** Programs whose detail is computed in one statement (default PROGRAMS_PER_CHUNK of store/report/stages.ts); the files do not depend on it. */
  programsPerChunk?: number;
  /** Lines a report may have on its own workbook sheet before it is summarised (default ROW_BUDGET). */
  rowBudget?: number;
  /**
   * Record the month's FOCUS rows as finalised (after the files are written): later exports of the
   * month keep them and add ChargeClass 'Correction' rows. Only a complete month after its end.
   */
  finalize?: boolean;
  /** Provider, publisher, invoice issuer and service names of the FOCUS export. */
  focusIdentity?: Partial<FocusIdentity>;
}

export interface ReportFile {
  /** Absolute or outDir-relative path as written. */
  path: string;
  rows: number;
  sha256: string;
}

export interface ReportResult {
  dir: string;
  period: { label: string; month: string | null; from: string; to: string };
  files: ReportFile[];
  partial: boolean;
  coverage: CoverageAssessment;
  /** The period's total: the sum of program_spend's rounded line costs, as a decimal string. */
  total: string;
  currency: string;
  priceBookRevision: string;
  granularity: Granularity;
  runIds: string[];
  /** Rows per report. */
  rows: Record<ReportName, number>;
  unpricedLines: number;
  /** The rates the price book marks assumed and how much of the total rests on them. */
  assumed: AssumedSummary;
  /** Reports the workbook carries as summaries (beyond the row budget). */
  summarised: SummarisedReport[];
  /** Month-to-date and projection (for a month period); forecast.current says whether the month is in progress. */
  forecast: Forecast | null;
  /** The FOCUS rows (when 'focus' was asked). */
  focus: FocusBuild | null;
  /** Warning lines (a rate change monthly data cannot price): the command exits 2. */
  warnings: string[];
  /** For a finalised month: the changes since finalisation (rows and net amount). */
  corrections: { rows: number; amount: string } | null;
}

/** requireComplete was asked and the period is not completely collected; nothing was written. */
export class ReportIncompleteError extends Error {
  constructor(
    readonly period: string,
    readonly coverage: CoverageAssessment,
  ) {
    const missing = coverage.scopes.filter((s) => s.required && !s.complete).map((s) => `${s.source}/${s.scope}`);
    super(
      `${period} is not completely collected (granularity ${coverage.granularity}; incomplete: ${missing.join(', ') || 'no complete granularity'}); ` +
        'no report was written. Run `usage-pipeline collect` for the period, or drop --require-complete to get a report marked PARTIAL.',
    );
    this.name = 'ReportIncompleteError';
  }
}

/**
 * DuckDB's limits while a report runs (memory: config report.memory_limit, whose default the config
 * schema holds, only ever lowering the store's): the report's tables spill to the database's temp
 * directory beyond it. Restored afterwards. ARCHITECTURE.md, "Reports", says what does not fit yet at
 * 10,000 programs.
 */
const REPORT_THREADS = 2;
/** The default of report.memory_limit, from the config schema (its single source), for callers that pass none. */
const REPORT_MEMORY_LIMIT_DEFAULT = CONFIG_DEFAULTS.report.memory_limit;
/**
 * DuckDB's allocator keeps memory it freed cached per thread, outside memory_limit, up to
 * allocator_flush_threshold (128 MiB by default) after each task: at the report's limit that cache
 * put the process far above it. Flushed after every task beyond this, by background threads.
 */
const REPORT_ALLOCATOR_FLUSH = '16MB';

export async function runReport(opts: RunReportOptions): Promise<ReportResult> {
  const before = await reportSettings(opts.store);
  // Report tables are created in line order and copied to files in insertion order (no second sort
  // of millions of rows): insertion order must be kept, whatever the store was opened with.
  await keepInsertionOrder(opts.store);
  // Only ever lowered: a store opened with a smaller limit keeps it.
  const limit = opts.memoryLimit ?? REPORT_MEMORY_LIMIT_DEFAULT;
  if (!Number.isFinite(sizeBytes(limit))) throw new Error(`report memory limit "${limit}" is not a size such as "256MB"`);
  if (sizeBytes(before.memory_limit) > sizeBytes(limit)) await setMemoryLimit(opts.store, limit.replace(/\s+/g, ''));
  if (Number(before.threads) > REPORT_THREADS) await setThreads(opts.store, REPORT_THREADS);
  await setAllocator(opts.store, REPORT_ALLOCATOR_FLUSH, true);
  // The run's large stages as Parquet files (store/report/stages.ts) in a hidden folder of the output folder,
  // created once the input is checked, removed whatever happens; one a killed run left is removed by
  // the next run (files.ts).
  const scratch: { dir?: string } = {};
  try {
    return await runReportBounded(opts, scratch);
  } finally {
    if (scratch.dir) await rm(scratch.dir, { recursive: true, force: true });
    // The caller's store may serve other work (the daemon): give its limits back.
    await restoreSettings(opts.store, before);
  }
}

/** '953.6 MiB', '256MB', '1GB' in bytes (DuckDB's size settings); unknown text counts as unlimited. */
function sizeBytes(text: string): number {
  const m = /^\s*([\d.]+)\s*(bytes|[KMGT]i?B)?\s*$/i.exec(text);
  if (!m) return Infinity;
  const unit = (m[2] ?? 'bytes').toUpperCase();
  const pow = { BYTES: 0, KB: 1, KIB: 1, MB: 2, MIB: 2, GB: 3, GIB: 3, TB: 4, TIB: 4 }[unit] ?? 0;
  return Number(m[1]) * (unit.includes('I') ? 1024 : 1000) ** pow;
}

/** What the staging step settled: the period, its coverage, the book, the report tables and FOCUS built. */
interface StagedReport {
  period: ReturnType<typeof resolvePeriod>;
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
}

/**
 * Step 1, price and stage: checks the period and formats, assesses coverage (refusing a partial period
 * when asked), refreshes the price tables, computes the report tables and the detail (stages), the
 * monthly-rate warnings, FOCUS, and for a finalised month replaces the tables by what was finalised.
 */
async function stageReport(opts: RunReportOptions, scratch: { dir?: string }, o: { log: Logger; now: Date }): Promise<StagedReport> {
  const { log, now } = o;
  const period = resolvePeriod(opts);
  const formats = [...new Set(opts.formats)];
  for (const f of formats) if (!OUTPUT_FORMATS.includes(f)) throw new Error(`unknown report format "${f}" (use ${OUTPUT_FORMATS.join(', ')})`);
  const book = loadPriceBook(opts.priceBookPath, opts.priceOverlayPath);
  const { store } = opts;

  const coverage = await assessCoverage(store, period.rangeStart, period.rangeEnd);
  const partial = !coverage.complete;
  if (partial && opts.requireComplete) throw new ReportIncompleteError(period.label, coverage);
  if (opts.finalize) assertFinalizable(period, partial, now);
  const g = coverage.granularity;
  log.info('report period', { period: period.label, granularity: g, partial, revision: book.revision });

  await refreshPrices(store, book, now);
  const params: ReportRange = { granularity: g, range_start: period.rangeStart, range_end: period.rangeEnd };
  // The report tables and the detail of program_spend's lines (each line's rounded cost over its days
  // and frameworks): the base of snapshot_storage, transfer, FOCUS, the charts and the forecast.
  const scratchDir = scratch.dir = await freshStageDir(opts.outDir);
  const detail = await materialiseReports(store, params, scratchDir, log, opts.programsPerChunk);
  log.debug('report stages done', { rss_mb: Math.round(process.memoryUsage.rss() / 1e6) });
  const warnings = g === 'monthly' ? await monthlyRateChangeWarnings(store, params) : [];
  for (const w of warnings) log.warn(w);

  // FOCUS is built from the current lines (its own finalisation adds Correction rows); only when the
  // FOCUS file is written, so a finalisation records exactly what the files contain.
  const focus = formats.includes('focus')
    ? await buildFocus(store, {
      period, granularity: g, book, coverageStatus: partial ? 'PARTIAL' : 'COMPLETE',
      ...(opts.focusIdentity ? { identity: opts.focusIdentity } : {}),
      daily: detail, scratchDir,
    })
    : null;
  log.debug('report focus built', { rss_mb: Math.round(process.memoryUsage.rss() / 1e6) });
  // A finalised month: every writer writes the finalised content, and the changes since are listed.
  const finalized = await finalizedState(store, period.month);
  const corrections = finalized ? await applyFinalized(store, finalized) : null;
  return { period, formats, book, coverage, partial, g, params, warnings, focus, finalized, corrections };
}

/** What the totals step read: each report's sheet source and rows, the total, run ids, assumed rates, the daily spend and forecast. */
interface ReportTotals {
  sheets: SheetSource[];
  rows: Record<ReportName, number>;
  total: string;
  unpricedLines: number;
  runIds: string[];
  assumed: AssumedSummary;
  daily: DailyProgramSpend[];
  forecast: Forecast | null;
}

/** Step 2, totals: each report's columns and money totals, the run ids, assumed rates, daily spend and the forecast. */
async function reportTotals(store: Store, st: StagedReport, now: Date): Promise<ReportTotals> {
  const { period, book, params } = st;
  const sheets: SheetSource[] = [];
  const rows = {} as Record<ReportName, number>;
  let total = '0.00';
  let unpricedLines = 0;
  for (const def of REPORTS) {
    const table = reportTable(def.name);
    const columns = (await tableColumns(store, table)).map((c): ColumnInfo => ({ name: c.column_name, type: c.data_type }));
    const t = await moneyTotals(store, table);
    rows[def.name] = Number(t.n_rows);
    if (def.name === 'program_spend') {
      total = t.cost;
      unpricedLines = Number(t.unpriced_lines);
    }
    sheets.push({ def, table, columns, rows: Number(t.n_rows), totalCost: t.cost });
  }
  const runIds = await reportRunIds(store, params);
  const assumed = await assumedRates(store, book.rates.filter((r) => r.assumed).map((r) => r.id), total);

  const daily = await dailySpend<DailyProgramSpend>(store);
  let forecast: Forecast | null = null;
  if (period.month !== null) {
    const end = await dataEnd(store, params);
    forecast = computeForecast({ rangeStart: period.rangeStart, rangeEnd: period.rangeEnd, now, dataEnd: end, currency: book.currency, daily });
  }
  return { sheets, rows, total, unpricedLines, runIds, assumed, daily, forecast };
}

/** Where a writer puts its file: the store, the set's folder, the files written so far, the log and the run's signal. */
interface WriteTarget {
  store: Store;
  dir: string;
  files: ReportFile[];
  log: Logger;
  signal?: AbortSignal;
}

/** Writes one file of the set atomically and lists it with its rows and sha256. */
async function writeSetFile(w: WriteTarget, name: string, rows: number | (() => number), write: (tmp: string) => Promise<void>, checkFirst = true): Promise<void> {
  const path = join(w.dir, name);
  if (checkFirst) w.signal?.throwIfAborted();
  await writeAtomically(path, write);
  w.files.push({ path, rows: typeof rows === 'number' ? rows : rows(), sha256: await sha256File(path) });
  w.log.debug('report file', { path: w.files.at(-1)!.path, rss_mb: Math.round(process.memoryUsage.rss() / 1e6) });
}

/** parquet: one file per report. */
async function writeParquetFiles(w: WriteTarget, sheets: SheetSource[]): Promise<void> {
  for (const s of sheets) await writeSetFile(w, `${s.def.name}.parquet`, s.rows, (tmp) => copyTableToParquet(w.store, s.table, tmp));
}

/** The corrections section of a finalised month, as a sheet source (and its Parquet file with parquet). */
async function writeCorrections(w: WriteTarget, corrections: { rows: number; amount: string }, parquet: boolean): Promise<SheetSource> {
  const columns = (await tableColumns(w.store, CORRECTIONS_TABLE)).map((c): ColumnInfo => ({ name: c.column_name, type: c.data_type }));
  const sheet: SheetSource = {
    def: { name: 'corrections', title: 'Changes since finalisation' },
    table: CORRECTIONS_TABLE, columns, rows: corrections.rows, totalCost: corrections.amount, costColumn: 'cost_change',
  };
  if (parquet) await writeSetFile(w, 'corrections.parquet', corrections.rows, (tmp) => copyTableToParquet(w.store, CORRECTIONS_TABLE, tmp));
  return sheet;
}

/** arrow: one Arrow IPC file per report. */
async function writeArrowFiles(w: WriteTarget, sheets: SheetSource[]): Promise<void> {
  for (const s of sheets) {
    await writeSetFile(w, `${s.def.name}.arrow`, s.rows, async (tmp) => {
      await writeArrowFile(w.store, s.table, tmp);
    });
  }
}

/** focus: the FOCUS 1.2 Parquet file. */
async function writeFocusFile(w: WriteTarget, focus: FocusBuild, label: string): Promise<void> {
  await writeSetFile(w, `focus-${label}.parquet`, focus.rows, (tmp) => copyFocusToParquet(w.store, focus.table, tmp));
}

/** html: the charts file. */
async function writeHtmlFile(w: WriteTarget, st: StagedReport, t: ReportTotals, o: { title: string; now: Date }): Promise<void> {
  const { period, partial, book, g } = st;
  const { total, unpricedLines, assumed, daily, forecast } = t;
  const html = renderReportHtml({
    title: o.title, periodLabel: period.label, rangeStart: period.rangeStart, rangeEnd: period.rangeEnd, generatedAt: o.now, partial,
    currency: book.currency, total, granularity: g, priceBookRevision: book.revision, unpricedLines, assumed,
    dailySpend: daily,
    ...(await chartData<Pick<HtmlReportInput, 'topPrograms' | 'topFrameworks' | 'storage' | 'snapshots' | 'transfer'>>(w.store, { topPrograms: TOP_PROGRAMS, topFrameworks: CHART_TOP_N })),
    forecast,
  });
  w.signal?.throwIfAborted();
  await writeSetFile(w, HTML_REPORT_NAME, daily.length, (tmp) => writeFile(tmp, html), false);
}

/** xlsx: the workbook (summaries beyond the row budget); returns the reports it summarised. */
async function writeWorkbookFile(w: WriteTarget, st: StagedReport, t: ReportTotals, o: {
  title: string; now: Date; correctionsSheet: SheetSource | null; rowBudget?: number; forecast: Forecast | null;
}): Promise<SummarisedReport[]> {
  const { period, partial, book, g, coverage, warnings, finalized, corrections, formats } = st;
  const { total, unpricedLines, assumed, runIds, sheets, forecast } = t;
  const { title, now, correctionsSheet } = o;
  const { store } = w;
  const coverageLines = coverage.scopes.map(
    (s) => `${s.source} ${s.scope}: ${s.complete ? 'complete' : `${((100 * s.coveredMs) / s.rangeMs).toFixed(1)}% covered`}` +
      `${s.required ? '' : ' (not eligible; data comes from another source)'} [${s.statuses || 'no rows'}]`,
  );
  let summarised: SummarisedReport[] = [];
  const { byProgram: summaryByProgram, byMetric: summaryByMetric, programLabels } = await workbookSummary(store, period.rangeEnd);
  let written = 0;
  w.signal?.throwIfAborted();
  await writeSetFile(w, `usage-${period.label}.xlsx`, () => written, async (tmp) => {
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
          about: [
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
            ...(finalized ? [['Finalised', `${finalized.finalizationId}: the sheets hold the month as finalised; ` +
              `${corrections!.rows} correction(s) since, net ${corrections!.amount} ${book.currency} (sheet corrections)`] as [string, string]] : []),
            ['Unpriced lines', `${unpricedLines} (a plan or metric without a rate: cost left blank, never 0 or guessed; UNPRICED on the Summary)`],
            ['Assumed rates', `${assumed.marked} rate(s) of the price book are marked assumed (column Assumed below); ` +
              `${assumed.amount} ${book.currency} of the total (${assumed.share}%) rests on the ${assumed.used.length} that priced this period`],
            ['Run ids', runIds.join(', ') || 'none'],
            ...sheets.map((s): [string, string] => [`Sheet ${s.def.name}`, `${s.def.title}; ${s.rows} rows`]),
          ],
          rates: book.rates.map((r) => ({
        rate_id: r.id, plan: r.plan, metric: r.metric, rate: r.rate,
        effective_from: r.effectiveFrom, effective_to: r.effectiveTo ?? '', source: r.source, assumed: r.assumed,
      })),
      sheets,
      ...(correctionsSheet ? { corrections: correctionsSheet } : {}),
      ...(o.rowBudget !== undefined ? { rowBudget: o.rowBudget } : {}),
      ...(formats.includes('html') ? { chartsLink: HTML_REPORT_NAME } : {}),
      ...(forecast?.current ? { forecast } : {}),
    });
    written = wb.rows;
    summarised = wb.summarised;
  }, false);
  return summarised;
}

/**
 * Step 4, finalisation: only once every file is in place, so a failed run records nothing; what is
 * recorded is what the files written contain (FOCUS rows only when the FOCUS file was written).
 * Returns the id of the files' finalisation recorded now, if any.
 */
async function finalizeMonth(store: Store, st: StagedReport, o: { files: ReportFile[]; dir: string; now: Date }): Promise<string | null> {
  const { period, focus, book, finalized } = st;
  let finalizedNow: string | null = null;
  if (period.month !== null) {
    if (focus) await recordFinalization(store, focus, { book, now: o.now });
    if (!finalized) {
      finalizedNow = `${period.month}#files`;
      await recordFinalizedFiles(store, {
        finalizationId: finalizedNow, month: period.month,
        files: o.files.map((f) => ({ name: f.path.slice(o.dir.length + 1), rows: f.rows, sha256: f.sha256 })),
      });
    }
  }
  return finalizedNow;
}

/**
 * Step 5, the manifest (written last: its presence means the month finished): the files this run
 * wrote, the earlier run's files carried into the set, coverage, prices, totals, finalisation, FOCUS.
 */
async function writeManifest(w: WriteTarget, st: StagedReport, t: ReportTotals, o: {
  finalDir: string; now: Date; finalizedNow: string | null; summarised: SummarisedReport[]; rowBudget?: number;
}) {
  const { dir, files } = w;
  const { period, partial, g, coverage, book, warnings, finalized, corrections, formats, focus } = st;
  const { total, unpricedLines, assumed, runIds, forecast } = t;
  const { finalDir, now, finalizedNow, summarised } = o;
  const manifestPath = join(dir, 'manifest.json');
  // A run may write only some formats (say `--format focus`) over a month an earlier run filled: the
  // earlier run's files that this run did not rewrite are carried into the new set (hard links, else
  // copies), and the manifest lists them with their own generation time and a sha256 recomputed from
  // the file, so the swapped-in set is the whole folder and its manifest describes every file.
  const writtenFiles = files.map((f) => ({ name: f.path.slice(dir.length + 1), rows: f.rows, sha256: f.sha256, generated_at: now.toISOString() }));
  w.signal?.throwIfAborted();
  const kept = await carryEarlierFiles(finalDir, dir, new Set(writtenFiles.map((f) => f.name)));
  const manifest = {
    period: { label: period.label, month: period.month, from: period.rangeStart.toISOString(), to: period.rangeEnd.toISOString() },
    generated_at: now.toISOString(),
    status: partial ? 'PARTIAL' : 'COMPLETE',
    partial,
    granularity: g,
    coverage: {
      complete: coverage.complete,
      complete_granularities: coverage.completeGranularities,
      reason: coverage.reason,
      scopes: coverage.scopes.map((s) => ({
        source: s.source, scope: s.scope, granularity: s.granularity, covered_ms: s.coveredMs, range_ms: s.rangeMs,
        complete: s.complete, required: s.required, statuses: s.statuses,
      })),
    },
    price_book: { revision: book.revision, sha256: book.sha256, path: book.path, currency: book.currency },
    rounding: ROUNDING_RULE,
    allowance_rule: ALLOWANCE_RULE,
    warnings,
    finalized: finalized !== null || finalizedNow !== null,
    corrected: (corrections?.rows ?? 0) > 0,
    ...(finalized ? {
      finalization: { id: finalized.finalizationId, files: finalized.files },
      corrections: { rows: corrections!.rows, net_amount: corrections!.amount, file: formats.includes('parquet') ? 'corrections.parquet' : null,
        sheet: formats.includes('xlsx') ? 'corrections' : null },
    } : finalizedNow ? { finalization: { id: finalizedNow } } : {}),
    total: total,
    unpriced_lines: unpricedLines,
    assumed_rates: {
      marked: assumed.marked, amount: assumed.amount, share_percent: assumed.share,
      used: assumed.used.map((r) => ({ rate_id: r.rate_id, lines: r.lines, cost: r.cost })),
    },
    ...(formats.includes('xlsx') ? {
      workbook: { row_budget: o.rowBudget ?? ROW_BUDGET, summarised: summarised.map((x) => ({ report: x.name, rows: x.rows, sheets: x.sheets })) },
    } : {}),
    run_ids: runIds,
    ...(forecast ? {
      forecast: {
        current: forecast.current, label: 'PROJECTION', as_of: forecast.asOf, complete_through: forecast.completeThrough,
        month_to_date: forecast.totals.monthToDate, projection: forecast.totals.projection, method: forecast.method,
      },
    } : {}),
    ...(focus ? {
      focus: {
        version: FOCUS_VERSION, rows: focus.rows, corrections: focus.corrections, billed_total: focus.billedTotal,
        finalizations: [...focus.finalizations, ...(focus.finalized ? [focus.finalized] : [])].map((f) => ({
          id: f.finalizationId, finalized_at: f.finalizedAt, rows: f.rows, billed_total: f.billedTotal, rows_sha256: f.rowsSha256,
        })),
      },
    } : {}),
    files: [...writtenFiles, ...kept].sort((a, b) => a.name.localeCompare(b.name)),
  };
  w.signal?.throwIfAborted();
  await writeAtomically(manifestPath, (tmp) => writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n'));
  files.push({ path: manifestPath, rows: files.length, sha256: await sha256File(manifestPath) });
  w.log.debug('report file', { path: files.at(-1)!.path, rss_mb: Math.round(process.memoryUsage.rss() / 1e6) });
  return manifest;
}

async function runReportBounded(opts: RunReportOptions, scratch: { dir?: string }): Promise<ReportResult> {
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? new Date();
  const { store } = opts;
  const st = await stageReport(opts, scratch, { log, now });
  const { period, formats, book, coverage, partial, g, warnings, focus, corrections } = st;
  const totals = await reportTotals(store, st, now);
  const { sheets, rows, total, unpricedLines, runIds, assumed, forecast } = totals;
  const finalDir = join(opts.outDir, period.label);
  const cleaned = await cleanReportLeftovers(opts.outDir);
  if (cleaned.length) log.info('removed what an interrupted report run left', { paths: cleaned });
  // The set is written into a fresh folder and swapped in whole, manifest last (files.ts).
  const dir = await freshSetDir(opts.outDir, period.label);
  try {
    const files: ReportFile[] = [];
    const w: WriteTarget = { store, dir, files, log, ...(opts.signal ? { signal: opts.signal } : {}) };

    // Step 3, one writer per format.
    if (formats.includes('parquet')) await writeParquetFiles(w, sheets);
    const correctionsSheet = corrections ? await writeCorrections(w, corrections, formats.includes('parquet')) : null;
    if (formats.includes('arrow')) await writeArrowFiles(w, sheets);
    if (focus && formats.includes('focus')) await writeFocusFile(w, focus, period.label);
    const title = `Usage and spend, ${period.label}${partial ? ' (PARTIAL)' : ''}`;
    if (formats.includes('html')) await writeHtmlFile(w, st, totals, { title, now });
    const summarised = formats.includes('xlsx')
      ? await writeWorkbookFile(w, st, totals, { title, now, correctionsSheet, forecast, ...(opts.rowBudget !== undefined ? { rowBudget: opts.rowBudget } : {}) })
      : [];

    const finalizedNow = opts.finalize ? await finalizeMonth(store, st, { files, dir, now }) : null;

    // Step 5, the manifest, then the swap.
    const manifest = await writeManifest(w, st, totals, { finalDir, now, finalizedNow, summarised, ...(opts.rowBudget !== undefined ? { rowBudget: opts.rowBudget } : {}) });
    opts.signal?.throwIfAborted();
    await swapInSet(dir, finalDir);
    log.info('report written', { dir: finalDir, total, partial });

    return {
      dir: finalDir,
      period: manifest.period,
      files: files.map((f) => ({ ...f, path: join(finalDir, f.path.slice(dir.length + 1)) })),
      partial,
      coverage,
      total,
      currency: book.currency,
      priceBookRevision: book.revision,
      granularity: g,
      runIds,
      rows,
      unpricedLines,
      assumed,
      summarised,
      forecast,
      focus,
      warnings,
      corrections,
    };
  } finally {
    // Whatever failed before the swap leaves the month's previous set as it was.
    await rm(dir, { recursive: true, force: true });
  }
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
    if (typeof f.name !== 'string' || f.name === 'manifest.json' || rewritten.has(f.name) || f.name !== basename(f.name) || f.name.startsWith('.')) continue;
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
