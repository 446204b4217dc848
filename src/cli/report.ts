// `usage-pipeline report`: the spend reports for a billing month (or a --from/--to range).
import { existsSync } from 'node:fs';
import { loadPriceBook } from '../billing/pricebook.js';
import { UsageError } from '../config/load.js';
import { StoreMissingError } from '../store/store.js';
import { runReport, OUTPUT_FORMATS, type OutputFormat, type ReportResult } from '../report/run.js';
import { parseList } from './collect.js';
import { checkWritableDir, commandContext, openCommandStore, type CommonOptions } from './context.js';

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

/** Everything a report can refuse (period, formats, price book, database), checked before any side effect. */
export function prepareReport(opts: ReportCommandOptions) {
  const ctx = commandContext(opts);
  if (!opts.month && !(opts.from && opts.to)) {
    throw new UsageError('say which period: --month YYYY-MM (e.g. --month 2026-10), or --from and --to.');
  }
  if (opts.month && (opts.from || opts.to)) throw new UsageError('give either --month or --from/--to, not both.');
  if (opts.month && !/^\d{4}-(0[1-9]|1[0-2])$/.test(opts.month)) {
    throw new UsageError(`--month "${opts.month}" is not a month: use YYYY-MM, e.g. 2026-10.`);
  }
  const formats = opts.format ? parseList<OutputFormat>('--format', opts.format, OUTPUT_FORMATS) : ctx.config.report.formats;
  const priceBookPath = opts.prices ? ctx.resolvePath(opts.prices) : ctx.resolvePath(ctx.config.report.prices);
  loadPriceBook(priceBookPath); // refused now (exit 64), not after the lock and the database were opened
  const outDir = opts.out ? ctx.resolvePath(opts.out) : ctx.resolvePath(ctx.config.report.out_dir);
  checkWritableDir(opts.out !== undefined ? '--out' : 'report.out_dir', outDir);
  // A report reads what collect wrote: it never creates the database it was asked to read.
  if (!existsSync(ctx.dbPath)) throw new StoreMissingError(ctx.dbPath);
  return { ctx, formats, priceBookPath, outDir };
}

export async function reportCommand(
  opts: ReportCommandOptions & { signal?: AbortSignal },
  prepared: ReturnType<typeof prepareReport> = prepareReport(opts),
): Promise<ReportResult & { exitCode: 0 | 2 }> {
  const { ctx, formats, priceBookPath, outDir } = prepared;
  const store = await openCommandStore(ctx, ctx.log, { create: false });
  try {
    const result = await runReport({
      store,
      ...(opts.month ? { month: opts.month } : {}),
      ...(opts.from ? { from: opts.from } : {}),
      ...(opts.to ? { to: opts.to } : {}),
      outDir,
      formats,
      priceBookPath,
      ...(opts.requireComplete ? { requireComplete: true } : {}),
      ...(opts.finalize ? { finalize: true } : {}),
      ...(opts.now ? { now: new Date(opts.now()) } : {}),
      log: ctx.log,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    return { ...result, exitCode: result.partial ? 2 : 0 };
  } finally {
    await store.close();
  }
}
