// `report`: prices a period's usage with the price book and writes one Parquet file per report,
// the workbook and manifest.json under outDir/<period>/. The set is written into a fresh hidden folder
// beside it (files.ts), the earlier run's other files carried over, the manifest last, and swapped in
// whole: a crash or a signal leaves the previous set or the new one. With requireComplete a partial
// period fails before anything is written. The steps: stageReport (price and stage), reportTotals,
// the writers of writers.ts (one per format), finalizeMonth, writeManifest.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { type Granularity } from '../domain/granularity.js';
import { silentLogger, type Logger } from '../log.js';
import { loadPriceBook } from '../billing/pricebook.js';
import { refreshPrices } from './prices.js';
import type { Store } from '../store/store.js';
import type { ReportRange } from '../store/report/tables.js';
import { assessCoverage, type CoverageAssessment } from './coverage.js';
import { REPORTS, reportTable, type ReportName } from './definitions.js';
import { cleanReportLeftovers, freshSetDir, freshStageDir, swapInSet } from './files.js';
import { computeForecast, forecastDays, type Forecast } from './forecast.js';
import { memoryFields } from './memoryLog.js';
import { assertFinalizable, buildFocus, recordFinalization, type FocusBuild, type FocusIdentity } from './focus.js';
import { resolvePeriod } from './period.js';
import {
  writeArrowFiles,
  writeCorrections,
  writeFocusFile,
  writeHtmlFile,
  writeManifest,
  writeParquetFiles,
  writeWorkbookFile,
  type ReportFile,
  type ReportTotals,
  type StagedReport,
  type WriteTarget,
} from './writers.js';
import { CONFIG_DEFAULTS } from '../config/schema.js';
import type { AssumedSummary, ColumnInfo, SheetSource, SummarisedReport } from './workbook.js';

/**
 * With monthly data only, a rate that changes inside the period cannot be applied (each bucket is the
 * whole month): one warning line per such rate. Collect daily data for the month to price it exactly.
 */
async function monthlyRateChangeWarnings(store: Store, params: ReportRange): Promise<string[]> {
  const rows = await store.report.tables.rateChangesInside(params);
  return rows.map(
    (r) =>
      `WARNING: rate ${r.rate_id} (${r.plan}, ${r.metric}) starts or ends inside the period ` +
      `(${r.effective_from.toISOString().slice(0, 10)}..${r.effective_to ? r.effective_to.toISOString().slice(0, 10) : 'open'}), ` +
      'but only monthly data is complete: each month is priced at the rate in force at its start. ' +
      'Collect daily data for the period (usage-pipeline collect --granularity daily) to price the change.',
  );
}

/** What of the total rests on the rates the price book marks assumed: amount and share (percent, 2 decimals, exact). */
async function assumedRates(store: Store, ids: string[], total: string): Promise<AssumedSummary> {
  const used =
    ids.length === 0
      ? []
      : (await store.report.tables.assumedRateUse(ids)).map((r) => ({ ...r, lines: Number(r.lines) }));
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
  /** DuckDB's memory limit while the report runs (config report.memory_limit, default from the config schema), in place of the store's. */
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

export { HTML_REPORT_NAME, type ReportFile } from './writers.js';

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
 * schema holds, in place of the store's for the report's duration): the report's tables spill to the
 * database's temp directory beyond it. Restored afterwards. ARCHITECTURE.md, "Reports", says what does not fit yet at
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
/** What DuckDB may keep of its buffer pool once the stages are done: the report tables in memory (about 30 MB
 *  for the `large` month) stay, the usage tables' cached blocks go (BENCHMARKS.md, "The report's cached blocks dropped after the stages (2026-11-24)"). */
const REPORT_CACHE_FLOOR = '48MB';

export async function runReport(opts: RunReportOptions): Promise<ReportResult> {
  const before = await opts.store.report.settings.reportSettings();
  // Report tables are created in line order and copied to files in insertion order (no second sort
  // of millions of rows): insertion order must be kept, whatever the store was opened with.
  await opts.store.report.settings.keepInsertionOrder();
  // The report's own limit, whatever the store was opened with (store.memory_limit, or the collector's
  // collect.memory_limit in a scheduled run).
  const limit = opts.memoryLimit ?? REPORT_MEMORY_LIMIT_DEFAULT;
  if (!Number.isFinite(sizeBytes(limit)))
    throw new Error(`report memory limit "${limit}" is not a size such as "256MB"`);
  await opts.store.setMemoryLimit(limit.replace(/\s+/g, ''));
  // DuckDB's cache of the files it read (the stage parts: read once or twice, and the OS caches them anyway)
  // held memory the workbook needed: off while a report runs.
  if (Number(before.threads) > REPORT_THREADS) await opts.store.report.settings.setThreads(REPORT_THREADS);
  await opts.store.report.settings.setAllocator(REPORT_ALLOCATOR_FLUSH, true);
  await opts.store.report.settings.setExternalFileCache(false);
  // The run's large stages as Parquet files (store/report/stages.ts) in a hidden folder of the output folder,
  // created once the input is checked, removed whatever happens; one a killed run left is removed by
  // the next run (files.ts).
  const scratch: { dir?: string } = {};
  try {
    return await runReportBounded(opts, scratch);
  } finally {
    if (scratch.dir) await rm(scratch.dir, { recursive: true, force: true });
    // The caller's store may serve other work (the daemon): give its limits back.
    await opts.store.report.settings.restoreSettings(before);
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

/**
 * Step 1, price and stage: checks the period and formats, assesses coverage (refusing a partial period
 * when asked), refreshes the price tables, computes the report tables and the detail (stages), the
 * monthly-rate warnings, FOCUS, and for a finalised month replaces the tables by what was finalised.
 */
async function stageReport(
  opts: RunReportOptions,
  scratch: { dir?: string },
  o: { log: Logger; now: Date },
): Promise<StagedReport> {
  const { log, now } = o;
  const period = resolvePeriod(opts);
  const formats = [...new Set(opts.formats)];
  for (const f of formats)
    if (!OUTPUT_FORMATS.includes(f)) throw new Error(`unknown report format "${f}" (use ${OUTPUT_FORMATS.join(', ')})`);
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
  // Read from the usage tables before the stages, not after them: their blocks stay in DuckDB's
  // buffer pool until something needs the memory; the stages do, and evict them.
  const runIds = await store.report.tables.reportRunIds(params);
  const end = period.month !== null ? await store.report.tables.dataEnd(params) : null;
  // The report tables and the detail of program_spend's lines (each line's rounded cost over its days
  // and frameworks): the base of snapshot_storage, transfer, FOCUS, the charts and the forecast.
  const scratchDir = (scratch.dir = await freshStageDir(opts.outDir));
  const detail = await store.report.stages.materialiseReports(params, scratchDir, log, opts.programsPerChunk);
  log.debug('report stages done', await memoryFields(store));
  // The usage tables' blocks the last stages read stay cached through the files and the workbook, the
  // report's peak: freed here (down to REPORT_CACHE_FLOOR).
  if (!(await store.report.settings.dropCachedBlocks(REPORT_CACHE_FLOOR)))
    log.debug('report cache not dropped: DuckDB holds more than the floor in use', { floor: REPORT_CACHE_FLOOR });
  log.debug('report cache dropped', await memoryFields(store));
  const warnings = g === 'monthly' ? await monthlyRateChangeWarnings(store, params) : [];
  for (const w of warnings) log.warn(w);

  // FOCUS is built from the current lines (its own finalisation adds Correction rows); only when the
  // FOCUS file is written, so a finalisation records exactly what the files contain.
  // Built on one thread, like the files: each group's rows are copied to a Parquet part in line
  // order, and with two threads that copy buffered what the second read ahead.
  if (formats.includes('focus')) await store.report.settings.setThreads(FILE_THREADS);
  const focus = formats.includes('focus')
    ? await buildFocus(store, {
        period,
        granularity: g,
        book,
        coverageStatus: partial ? 'PARTIAL' : 'COMPLETE',
        ...(opts.focusIdentity ? { identity: opts.focusIdentity } : {}),
        daily: detail,
        scratchDir,
      })
    : null;
  log.debug('report focus built', await memoryFields(store));
  // A finalised month: every writer writes the finalised content, and the changes since are listed.
  const finalized = await store.report.finalized.finalizedState(period.month);
  const corrections = finalized ? await store.report.finalized.applyFinalized(finalized) : null;
  return {
    period,
    formats,
    book,
    coverage,
    partial,
    g,
    params,
    warnings,
    focus,
    finalized,
    corrections,
    runIds,
    dataEnd: end,
  };
}

/** A UTC midnight (ms) as the DATE text forecast_programs.sql compares days with. */
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** The files are copied from the stages' Parquet parts on one thread (FILE_THREADS in runReportBounded). */
const FILE_THREADS = 1;

/** Step 2, totals: each report's columns and money totals, assumed rates, daily spend and the forecast (the run ids were read before the stages). */
async function reportTotals(store: Store, st: StagedReport, now: Date): Promise<ReportTotals> {
  const { period, book } = st;
  const sheets: SheetSource[] = [];
  const rows = {} as Record<ReportName, number>;
  let total = '0.00';
  let unpricedLines = 0;
  for (const def of REPORTS) {
    const table = reportTable(def.name);
    const columns = (await store.report.tables.tableColumns(table)).map((c): ColumnInfo => ({
      name: c.column_name,
      type: c.data_type,
    }));
    const t = await store.report.tables.moneyTotals(table);
    rows[def.name] = Number(t.n_rows);
    if (def.name === 'program_spend') {
      total = t.cost;
      unpricedLines = Number(t.unpriced_lines);
    }
    sheets.push({ def, table, columns, rows: Number(t.n_rows), totalCost: t.cost });
  }
  const { runIds } = st;
  const assumed = await assumedRates(
    store,
    book.rates.filter((r) => r.assumed).map((r) => r.id),
    total,
  );

  // The forecast and the charts get their per-day figures summed in SQL (forecast_programs.sql,
  // chart_daily_spend.sql), not one row per program and day (about 310,000 at 10,000 programs).
  const dailyShape = await store.report.tables.dailySpendShape();
  let forecast: Forecast | null = null;
  if (period.month !== null) {
    const range = { rangeStart: period.rangeStart, rangeEnd: period.rangeEnd, now, dataEnd: st.dataEnd };
    const span = forecastDays(range);
    const daily = await store.report.tables.forecastPrograms({
      cutoffDay: utcDay(span.cutoff),
      windowStartDay: utcDay(span.windowStart),
    });
    forecast = computeForecast({ ...range, currency: book.currency, daily });
  }
  return { sheets, rows, total, unpricedLines, runIds, assumed, dailyShape, forecast };
}

/**
 * Step 4, finalisation: only once every file is in place, so a failed run records nothing; what is
 * recorded is what the files written contain (FOCUS rows only when the FOCUS file was written).
 * Returns the id of the files' finalisation recorded now, if any.
 */
async function finalizeMonth(
  store: Store,
  st: StagedReport,
  o: { files: ReportFile[]; dir: string; now: Date },
): Promise<string | null> {
  const { period, focus, book, finalized } = st;
  let finalizedNow: string | null = null;
  if (period.month !== null) {
    if (focus) await recordFinalization(store, focus, { book, now: o.now });
    if (!finalized) {
      finalizedNow = `${period.month}#files`;
      await store.report.finalized.recordFinalizedFiles({
        finalizationId: finalizedNow,
        month: period.month,
        files: o.files.map((f) => ({ name: f.path.slice(o.dir.length + 1), rows: f.rows, sha256: f.sha256 })),
      });
    }
  }
  return finalizedNow;
}

async function runReportBounded(opts: RunReportOptions, scratch: { dir?: string }): Promise<ReportResult> {
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? new Date();
  const { store } = opts;
  const st = await stageReport(opts, scratch, { log, now });
  const { period, formats, book, coverage, partial, g, warnings, focus, corrections } = st;
  const totals = await reportTotals(store, st, now);
  const { sheets, rows, total, unpricedLines, runIds, assumed, forecast } = totals;
  // The files are copied from the stages' Parquet parts on one thread: with two, a copy in insertion
  // order buffers the batches the second thread reads ahead.
  await store.report.settings.setThreads(FILE_THREADS);
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
      ? await writeWorkbookFile(w, st, totals, {
          title,
          now,
          correctionsSheet,
          forecast,
          ...(opts.rowBudget !== undefined ? { rowBudget: opts.rowBudget } : {}),
        })
      : [];

    const finalizedNow = opts.finalize ? await finalizeMonth(store, st, { files, dir, now }) : null;

    // Step 5, the manifest, then the swap.
    const manifest = await writeManifest(w, st, totals, {
      finalDir,
      now,
      finalizedNow,
      summarised,
      ...(opts.rowBudget !== undefined ? { rowBudget: opts.rowBudget } : {}),
    });
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
