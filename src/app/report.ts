// writeReport(): the reports of one period with everything wired (store, output directory, formats and
// price book from the configuration unless given), for the CLI, the daemon and the demo.
import type { OutputFormat } from '../domain/formats.js';
import type { ReportResult } from '../report/run.js';
import { openCommandStore, type CommandContext } from './context.js';

export interface WriteReportOptions {
  /** YYYY-MM; or from/to. */
  month?: string;
  from?: string;
  to?: string;
  /** Default: the configuration's report.out_dir. Resolved against the config file's directory. */
  outDir?: string;
  /** Default: the configuration's report.formats. */
  formats?: readonly OutputFormat[];
  /** Default: the configuration's report.prices. Resolved against the config file's directory. */
  prices?: string;
  requireComplete?: boolean;
  finalize?: boolean;
  now?: Date;
}

/** Where reports go when no directory is given. */
export function reportOutDir(ctx: CommandContext): string {
  return ctx.resolvePath(ctx.config.report.out_dir);
}

export async function writeReport(ctx: CommandContext, opts: WriteReportOptions): Promise<ReportResult> {
  // Loaded here: the report writers (Parquet, Excel) are only needed when a report is written, which
  // for the daemon is once a month.
  const { runReport } = await import('../report/run.js');
  const store = await openCommandStore(ctx);
  try {
    return await runReport({
      store,
      ...(opts.month ? { month: opts.month } : {}),
      ...(opts.from ? { from: opts.from } : {}),
      ...(opts.to ? { to: opts.to } : {}),
      outDir: opts.outDir !== undefined ? ctx.resolvePath(opts.outDir) : reportOutDir(ctx),
      // runReport refuses a format it does not write, with a message naming the ones it does.
      formats: opts.formats ?? ctx.config.report.formats,
      priceBookPath: ctx.resolvePath(opts.prices ?? ctx.config.report.prices),
      ...(opts.requireComplete ? { requireComplete: true } : {}),
      ...(opts.finalize ? { finalize: true } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      memoryLimit: ctx.config.report.memory_limit,
      log: ctx.log,
    });
  } finally {
    await store.close();
  }
}
