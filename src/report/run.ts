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
import { loadPriceBook } from '../billing/pricebook.js';
import { refreshPrices } from './prices.js';
import type { Store } from '../store/store.js';
import { quoteIdent, quoteLiteral, readSql } from '../store/sql.js';
import { assessCoverage, type CoverageAssessment } from './coverage.js';
import { ALLOWANCE_RULE, GAUGE_RULE, REPORTS, ROUNDING_RULE, reportTable, type ReportName } from './definitions.js';
import { cleanReportLeftovers, freshSetDir, freshStageDir, sha256File, swapInSet, writeAtomically } from './files.js';
import { computeForecast, forecastDays, type DailyProgramSpend, type Forecast } from './forecast.js';
import { FOCUS_VERSION, assertFinalizable, buildFocus, recordFinalization, type FocusBuild, type FocusIdentity } from './focus.js';
import { TOP_PROGRAMS, renderReportHtml } from './html.js';
import { writeArrowFile } from './arrow.js';
import { resolvePeriod } from './period.js';
import { CONFIG_DEFAULTS } from '../config/schema.js';
import { materialiseReports } from './stages.js';
import { memoryFields } from './memoryLog.js';
import { writeWorkbook, ROW_BUDGET, type AssumedSummary, type ColumnInfo, type SheetSource, type SummarisedReport } from './workbook.js';
import { CORRECTIONS_TABLE, applyFinalized, finalizedState, recordFinalizedFiles } from './finalize.js';

/**
 * With monthly data only, a rate that changes inside the period cannot be applied (each bucket is the
 * whole month): one warning line per such rate. Collect daily data for the month to price it exactly.
 */
async function monthlyRateChangeWarnings(store: Store, params: Record<string, unknown>): Promise<string[]> {
  const rows = await store.query<{ rate_id: string; plan: string; metric: string; effective_from: Date; effective_to: Date | null }>(
    readSql('src/report/sql/rate_changes_inside.sql'), params as never,
  );
  return rows.map((r) =>
    `WARNING: rate ${r.rate_id} (${r.plan}, ${r.metric}) starts or ends inside the period ` +
    `(${r.effective_from.toISOString().slice(0, 10)}..${r.effective_to ? r.effective_to.toISOString().slice(0, 10) : 'open'}), ` +
    'but only monthly data is complete: each month is priced at the rate in force at its start. ' +
    'Collect daily data for the period (usage-pipeline collect --granularity daily) to price the change.');
}

/** What of the total rests on the rates the price book marks assumed: amount and share (percent, 2 decimals, exact). */
async function assumedRates(store: Store, ids: string[], total: string): Promise<AssumedSummary> {
  const used = ids.length === 0 ? [] : (await store.query<{ rate_id: string; plan: string; metric: string; rate: string; lines: bigint; cost: string }>(
    readSql('src/report/sql/assumed_rates.sql'), { rate_ids: ids })).map((r) => ({ ...r, lines: Number(r.lines) }));
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
  /** Programs whose detail is computed in one statement (default PROGRAMS_PER_CHUNK of stages.ts); the files do not depend on it. */
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
const SETTINGS_NOW = "SELECT current_setting('memory_limit') AS memory_limit, current_setting('threads') AS threads, " +
  "current_setting('preserve_insertion_order') AS preserve_insertion_order, " +
  "current_setting('allocator_flush_threshold') AS flush, current_setting('allocator_background_threads') AS background";

const FILE_THREADS = 'SET threads = 1';
/** The charts' extent: rows of spend per program and day (the manifest's row count of the HTML file) and programs. */
const DAILY_SPEND_SHAPE = 'SELECT count(*) AS day_rows, count(DISTINCT program_id) AS programs FROM (SELECT DISTINCT program_id, usage_day FROM rpt_daily)';
/** A UTC midnight (ms) as the DATE text forecast_programs.sql compares days with. */
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function runReport(opts: RunReportOptions): Promise<ReportResult> {
  const [before] = await opts.store.query<{
    memory_limit: string; threads: bigint | number; preserve_insertion_order: boolean; flush: string; background: boolean;
  }>(SETTINGS_NOW);
  // Report tables are created in line order and copied to files in insertion order (no second sort
  // of millions of rows): insertion order must be kept, whatever the store was opened with.
  await opts.store.run('SET preserve_insertion_order = true');
  // Only ever lowered: a store opened with a smaller limit keeps it.
  const limit = opts.memoryLimit ?? REPORT_MEMORY_LIMIT_DEFAULT;
  if (!Number.isFinite(sizeBytes(limit))) throw new Error(`report memory limit "${limit}" is not a size such as "256MB"`);
  if (sizeBytes(before!.memory_limit) > sizeBytes(limit)) await opts.store.run(`SET memory_limit = ${quoteLiteral(limit.replace(/\s+/g, ''))}`);
  if (Number(before!.threads) > REPORT_THREADS) await opts.store.run(`SET threads = ${REPORT_THREADS}`);
  await opts.store.run(`SET allocator_flush_threshold = ${quoteLiteral(REPORT_ALLOCATOR_FLUSH)}`);
  await opts.store.run('SET allocator_background_threads = true');
  // The run's large stages as Parquet files (stages.ts) in a hidden folder of the output folder,
  // created once the input is checked, removed whatever happens; one a killed run left is removed by
  // the next run (files.ts).
  const scratch: { dir?: string } = {};
  try {
    return await runReportBounded(opts, scratch);
  } finally {
    if (scratch.dir) await rm(scratch.dir, { recursive: true, force: true });
    // The caller's store may serve other work (the daemon): give its limits back.
    await opts.store.run(`SET memory_limit = ${quoteLiteral(before!.memory_limit.replace(/\s+/g, ''))}`);
    await opts.store.run(`SET threads = ${Number(before!.threads)}`);
    await opts.store.run(`SET preserve_insertion_order = ${before!.preserve_insertion_order ? 'true' : 'false'}`);
    await opts.store.run(`SET allocator_flush_threshold = ${quoteLiteral(before!.flush.replace(/\s+/g, ''))}`);
    await opts.store.run(`SET allocator_background_threads = ${before!.background ? 'true' : 'false'}`);
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

async function runReportBounded(opts: RunReportOptions, scratch: { dir?: string }): Promise<ReportResult> {
  const log = opts.log ?? silentLogger;
  const now = opts.now ?? new Date();
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
  const params = { granularity: g, range_start: period.rangeStart, range_end: period.rangeEnd };
  const sheets: SheetSource[] = [];
  const rows = {} as Record<ReportName, number>;
  let total = '0.00';
  let unpricedLines = 0;
  // The report tables and the detail of program_spend's lines (each line's rounded cost over its days
  // and frameworks): the base of snapshot_storage, transfer, FOCUS, the charts and the forecast.
  const scratchDir = scratch.dir = await freshStageDir(opts.outDir);
  const detail = await materialiseReports(store, params, scratchDir, log, opts.programsPerChunk);
  log.debug('report stages done', await memoryFields(store));
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
  log.debug('report focus built', await memoryFields(store));
  // A finalised month: every writer writes the finalised content, and the changes since are listed.
  const finalized = await finalizedState(store, period.month);
  const corrections = finalized ? await applyFinalized(store, finalized) : null;

  for (const def of REPORTS) {
    const table = reportTable(def.name);
    const columns = (await store.query<{ column_name: string; data_type: string }>(readSql('src/report/sql/table_columns.sql'), { table }))
      .map((c): ColumnInfo => ({ name: c.column_name, type: c.data_type }));
    const [t] = await store.query<{ n_rows: bigint; cost: string; unpriced_lines: bigint }>(
      readSql('src/report/sql/money_totals.sql').replace('{{table}}', quoteIdent(table)),
    );
    rows[def.name] = Number(t!.n_rows);
    if (def.name === 'program_spend') {
      total = t!.cost;
      unpricedLines = Number(t!.unpriced_lines);
    }
    sheets.push({ def, table, columns, rows: Number(t!.n_rows), totalCost: t!.cost });
  }
  const runIds = (await store.query<{ run_id: string }>(readSql('src/report/sql/run_ids.sql'), params)).map((r) => r.run_id);
  const assumed = await assumedRates(store, book.rates.filter((r) => r.assumed).map((r) => r.id), total);

  // The forecast and the charts get their per-day figures summed in SQL (forecast_programs.sql,
  // chart_daily_spend.sql), not one row per program and day (about 310,000 at 10,000 programs).
  const [dailyShape] = await store.query<{ day_rows: bigint; programs: bigint }>(DAILY_SPEND_SHAPE);
  let forecast: Forecast | null = null;
  if (period.month !== null) {
    const [end] = await store.query<{ data_end: Date | null }>(readSql('src/report/sql/data_end.sql'), params);
    const range = { rangeStart: period.rangeStart, rangeEnd: period.rangeEnd, now, dataEnd: end?.data_end ?? null };
    const span = forecastDays(range);
    const daily = await store.query<DailyProgramSpend>(readSql('src/report/sql/forecast_programs.sql'),
      { cutoff_day: utcDay(span.cutoff), window_start_day: utcDay(span.windowStart) });
    forecast = computeForecast({ ...range, currency: book.currency, daily });
  }
  // The files are copied from the stages' Parquet parts on one thread: with two, a copy in insertion
  // order buffers the batches the second thread reads ahead (2 million FOCUS rows: 1,015 MB of RSS at
  // a 1GB limit, 663 MB at 320MB; one thread, with FOCUS row groups of 30,720 rows: 274 MB).
  await store.run(FILE_THREADS);
  const finalDir = join(opts.outDir, period.label);
  const cleaned = await cleanReportLeftovers(opts.outDir);
  if (cleaned.length) log.info('removed what an interrupted report run left', { paths: cleaned });
  // The set is written into a fresh folder and swapped in whole, manifest last (files.ts).
  const dir = await freshSetDir(opts.outDir, period.label);
  try {
    const files: ReportFile[] = [];

    if (formats.includes('parquet')) {
      const copy = readSql('src/report/sql/copy_parquet.sql');
      for (const s of sheets) {
        const path = join(dir, `${s.def.name}.parquet`);
        opts.signal?.throwIfAborted();
        await writeAtomically(path, (tmp) => store.run(copy.replace('{{table}}', quoteIdent(s.table)).replace('{{path}}', () => quoteLiteral(tmp))));
        files.push({ path, rows: s.rows, sha256: await sha256File(path) });
        log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
      }
    }

    // The corrections section of a finalised month, as its own file beside the finalised ones.
    let correctionsSheet: SheetSource | null = null;
    if (corrections) {
      const columns = (await store.query<{ column_name: string; data_type: string }>(readSql('src/report/sql/table_columns.sql'), { table: CORRECTIONS_TABLE }))
        .map((c): ColumnInfo => ({ name: c.column_name, type: c.data_type }));
      correctionsSheet = {
        def: { name: 'corrections', sqlPath: 'src/report/sql/corrections.sql', title: 'Changes since finalisation' },
        table: CORRECTIONS_TABLE, columns, rows: corrections.rows, totalCost: corrections.amount, costColumn: 'cost_change',
      };
      if (formats.includes('parquet')) {
        const path = join(dir, 'corrections.parquet');
        const copy = readSql('src/report/sql/copy_parquet.sql');
        opts.signal?.throwIfAborted();
        await writeAtomically(path, (tmp) => store.run(copy.replace('{{table}}', quoteIdent(CORRECTIONS_TABLE)).replace('{{path}}', () => quoteLiteral(tmp))));
        files.push({ path, rows: corrections.rows, sha256: await sha256File(path) });
        log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
      }
    }

    if (formats.includes('arrow')) {
      for (const s of sheets) {
        const path = join(dir, `${s.def.name}.arrow`);
        opts.signal?.throwIfAborted();
        await writeAtomically(path, async (tmp) => {
          await writeArrowFile(store, s.table, tmp);
        });
        files.push({ path, rows: s.rows, sha256: await sha256File(path) });
        log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
      }
    }

    if (focus && formats.includes('focus')) {
      const path = join(dir, `focus-${period.label}.parquet`);
      const copy = readSql('src/report/sql/copy_focus_parquet.sql');
      opts.signal?.throwIfAborted();
      await writeAtomically(path, (tmp) => store.run(copy.replace('{{table}}', quoteIdent(focus.table)).replace('{{path}}', () => quoteLiteral(tmp))));
      files.push({ path, rows: focus.rows, sha256: await sha256File(path) });
      log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
    }

    const title = `Usage and spend, ${period.label}${partial ? ' (PARTIAL)' : ''}`;
    if (formats.includes('html')) {
      const path = join(dir, HTML_REPORT_NAME);
      const topPrograms = await store.query<{ program_id: string; name: string; cost: string }>(readSql('src/report/sql/chart_top_programs.sql'), { limit: BigInt(TOP_PROGRAMS) });
      const html = renderReportHtml({
        title, periodLabel: period.label, rangeStart: period.rangeStart, rangeEnd: period.rangeEnd, generatedAt: now, partial,
        currency: book.currency, total, granularity: g, priceBookRevision: book.revision, unpricedLines, assumed,
        dailySpend: await store.query(readSql('src/report/sql/chart_daily_spend.sql'), { top: topPrograms.map((p) => p.program_id) }),
        programCount: Number(dailyShape!.programs),
        topPrograms,
        topFrameworks: await store.query(readSql('src/report/sql/chart_top_frameworks.sql'), { limit: BigInt(CHART_TOP_N) }),
        storage: await store.query(readSql('src/report/sql/chart_storage.sql')),
        snapshots: await store.query(readSql('src/report/sql/chart_snapshots.sql')),
        transfer: await store.query(readSql('src/report/sql/chart_transfer.sql')),
        forecast,
      });
      opts.signal?.throwIfAborted();
      await writeAtomically(path, (tmp) => writeFile(tmp, html));
      files.push({ path, rows: Number(dailyShape!.day_rows), sha256: await sha256File(path) });
      log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
    }

    const coverageLines = coverage.scopes.map(
      (s) => `${s.source} ${s.scope}: ${s.complete ? 'complete' : `${((100 * s.coveredMs) / s.rangeMs).toFixed(1)}% covered`}` +
        `${s.required ? '' : ' (not eligible; data comes from another source)'} [${s.statuses || 'no rows'}]`,
    );
    let summarised: SummarisedReport[] = [];
    if (formats.includes('xlsx')) {
      const path = join(dir, `usage-${period.label}.xlsx`);
      const summaryByProgram = await store.query(readSql('src/report/sql/summary_by_program.sql'));
      const summaryByMetric = await store.query(readSql('src/report/sql/summary_by_metric.sql'));
      const programLabels = new Map((await store.query<{ program_id: string; label: string }>(readSql('src/report/sql/program_labels.sql'),
        { range_end: period.rangeEnd })).map((r) => [r.program_id, r.label]));
      let written = 0;
      opts.signal?.throwIfAborted();
      await writeAtomically(path, async (tmp) => {
        const w = await writeWorkbook(store, tmp, {
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
          ...(opts.rowBudget !== undefined ? { rowBudget: opts.rowBudget } : {}),
          ...(formats.includes('html') ? { chartsLink: HTML_REPORT_NAME } : {}),
          ...(forecast?.current ? { forecast } : {}),
        });
        written = w.rows;
        summarised = w.summarised;
      });
      files.push({ path, rows: written, sha256: await sha256File(path) });
      log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
    }

    // Finalise only once every file is in place, so a failed run records nothing; what is recorded is
    // what the files written contain (FOCUS rows only when the FOCUS file was written).
    let finalizedNow: string | null = null;
    if (opts.finalize && period.month !== null) {
      if (focus) await recordFinalization(store, focus, { book, now });
      if (!finalized) {
        finalizedNow = `${period.month}#files`;
        await recordFinalizedFiles(store, {
          finalizationId: finalizedNow, month: period.month,
          files: files.map((f) => ({ name: f.path.slice(dir.length + 1), rows: f.rows, sha256: f.sha256 })),
        });
      }
    }

    const manifestPath = join(dir, 'manifest.json');
    // A run may write only some formats (say `--format focus`) over a month an earlier run filled: the
    // earlier run's files that this run did not rewrite are carried into the new set (hard links, else
    // copies), and the manifest lists them with their own generation time and a sha256 recomputed from
    // the file, so the swapped-in set is the whole folder and its manifest describes every file.
    const writtenFiles = files.map((f) => ({ name: f.path.slice(dir.length + 1), rows: f.rows, sha256: f.sha256, generated_at: now.toISOString() }));
    opts.signal?.throwIfAborted();
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
        workbook: { row_budget: opts.rowBudget ?? ROW_BUDGET, summarised: summarised.map((x) => ({ report: x.name, rows: x.rows, sheets: x.sheets })) },
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
    opts.signal?.throwIfAborted();
    await writeAtomically(manifestPath, (tmp) => writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n'));
    files.push({ path: manifestPath, rows: files.length, sha256: await sha256File(manifestPath) });
    log.debug('report file', { path: files.at(-1)!.path, ...(await memoryFields(store)) });
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
