// `usage-pipeline report`: the spend reports for a billing month (or a --from/--to range).
import { UsageError } from '../domain/errors.js';
import { previousMonth } from '../domain/calendar.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../domain/formats.js';
import type { ReportResult } from '../report/run.js';
import { prepareReport, writeReport, type PreparedReport, type WriteReportOptions } from '../app/report.js';
import { parseList } from './collect.js';
import { commandContext, type CommandContext, type CommonOptions } from '../app/context.js';

export interface ReportCommandOptions extends CommonOptions {
  month?: string;
  from?: string;
  to?: string;
  out?: string;
  format?: string;
  prices?: string;
  requireComplete?: boolean;
  finalize?: boolean;
  now?: () => number;
}

export interface PreparedReportCommand {
  ctx: CommandContext;
  options: WriteReportOptions;
  prepared: PreparedReport;
}

/**
 * Everything a report can refuse (period, formats, price book, output folder, a missing database),
 * checked before any side effect: main.ts calls this before it takes the run lock.
 */
export function prepareReportCommand(opts: ReportCommandOptions): PreparedReportCommand {
  const ctx = commandContext(opts);
  if (!opts.month && !(opts.from && opts.to)) {
    throw new UsageError('say which period: --month YYYY-MM (e.g. --month 2026-10), or --from and --to.');
  }
  if (opts.month && (opts.from || opts.to)) throw new UsageError('give either --month or --from/--to, not both.');
  // `--month last`: the previous calendar month (UTC), for timers and cron lines that cannot compute it.
  if (opts.month === 'last') opts = { ...opts, month: previousMonth((opts.now ?? Date.now)()) };
  if (opts.month && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month)) {
    throw new UsageError(`--month "${opts.month}" is not a month: use YYYY-MM (e.g. 2026-10) or last.`);
  }
  const formats = opts.format
    ? parseList<OutputFormat>('--format', opts.format, OUTPUT_FORMATS)
    : ctx.config.report.formats;
  const options: WriteReportOptions = {
    ...(opts.month ? { month: opts.month } : {}),
    ...(opts.from ? { from: opts.from } : {}),
    ...(opts.to ? { to: opts.to } : {}),
    ...(opts.out ? { outDir: opts.out } : {}),
    formats,
    ...(opts.prices ? { prices: opts.prices } : {}),
    ...(opts.requireComplete ? { requireComplete: true } : {}),
    ...(opts.finalize ? { finalize: true } : {}),
    ...(opts.now ? { now: new Date(opts.now()) } : {}),
  };
  return { ctx, options, prepared: prepareReport(ctx, options) };
}

export async function reportCommand(
  opts: ReportCommandOptions & { signal?: AbortSignal },
  prep: PreparedReportCommand = prepareReportCommand(opts),
): Promise<ReportResult & { exitCode: 0 | 2 }> {
  const result = await writeReport(
    prep.ctx,
    { ...prep.options, ...(opts.signal ? { signal: opts.signal } : {}) },
    prep.prepared,
  );
  return { ...result, exitCode: result.partial || result.warnings.length > 0 ? 2 : 0 };
}
