// `usage-pipeline report`: the spend reports for a billing month (or a --from/--to range).
import { resolve } from 'node:path';
import { UsageError } from '../config/load.js';
import { runReport, OUTPUT_FORMATS, type OutputFormat, type ReportResult } from '../report/run.js';
import { parseList } from './collect.js';
import { commandContext, openCommandStore, type CommonOptions } from './context.js';

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

export async function reportCommand(opts: ReportCommandOptions): Promise<ReportResult & { exitCode: 0 | 2 }> {
  const ctx = commandContext(opts);
  if (!opts.month && !(opts.from && opts.to)) {
    throw new UsageError('say which period: --month YYYY-MM (e.g. --month 2026-10), or --from and --to.');
  }
  if (opts.month && (opts.from || opts.to)) throw new UsageError('give either --month or --from/--to, not both.');
  if (opts.month && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month)) {
    throw new UsageError(`--month "${opts.month}" is not a month: use YYYY-MM, e.g. 2026-10.`);
  }
  const formats = opts.format ? parseList<OutputFormat>('--format', opts.format, OUTPUT_FORMATS) : ctx.config.report.formats;
  const store = await openCommandStore(ctx);
  try {
    const result = await runReport({
      store,
      ...(opts.month ? { month: opts.month } : {}),
      ...(opts.from ? { from: opts.from } : {}),
      ...(opts.to ? { to: opts.to } : {}),
      // Flags are the caller's paths, relative to the working directory; the config's are absolute.
      outDir: resolve(ctx.cwd, opts.out ?? ctx.config.report.out_dir),
      formats,
      priceBookPath: resolve(ctx.cwd, opts.prices ?? ctx.config.report.prices),
      ...(ctx.config.report.price_overlay ? { priceOverlayPath: ctx.config.report.price_overlay } : {}),
      ...(opts.requireComplete ? { requireComplete: true } : {}),
      ...(opts.finalize ? { finalize: true } : {}),
      ...(opts.now ? { now: new Date(opts.now()) } : {}),
      log: ctx.log,
    });
    return { ...result, exitCode: result.partial ? 2 : 0 };
  } finally {
    await store.close();
  }
}
