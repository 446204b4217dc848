// writeReport(): the reports of one period with everything wired (store, output directory, formats and
// price book from the configuration unless given), for the CLI, the daemon and the demo.
// prepareReport() checks what a report can refuse (price book, output folder, the database's presence)
// with no side effect, so the CLI runs it before taking the run lock.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadPriceBook } from '../billing/pricebook.js';
import type { OutputFormat } from '../domain/formats.js';
import type { ReportResult } from '../report/run.js';
import { isOutOfMemory, StoreMissingError } from '../store/store.js';
import { checkWritableDir, openCommandStore, priceBookPaths, type CommandContext } from './context.js';

export interface WriteReportOptions {
  /** YYYY-MM; or from/to. */
  month?: string;
  from?: string;
  to?: string;
  /** Default: the configuration's report.out_dir. A given one is the caller's: against the working directory. */
  outDir?: string;
  /** Default: the configuration's report.formats. */
  formats?: readonly OutputFormat[];
  /** Default: the configuration's report.prices (and its price_overlay). A given one: against the working directory. */
  prices?: string;
  requireComplete?: boolean;
  finalize?: boolean;
  now?: Date;
  /** Stops the run between files (SIGINT/SIGTERM): the month's previous set stays as it was. */
  signal?: AbortSignal;
}

/** Where reports go when no directory is given. */
export function reportOutDir(ctx: CommandContext): string {
  return ctx.resolvePath(ctx.config.report.out_dir);
}

/** What prepareReport() checked: the output folder and the price book's files. */
export interface PreparedReport {
  outDir: string;
  book: { path: string; overlay?: string };
}

/**
 * Everything a report can refuse before it opens anything: the price book (exit 64 with each problem,
 * printed once), an output folder this user cannot write (errno and path), and a database that does
 * not exist (a report reads what collect wrote: it never creates the database it was asked to read).
 */
export function prepareReport(
  ctx: CommandContext,
  opts: Pick<WriteReportOptions, 'outDir' | 'prices'> = {},
): PreparedReport {
  const book = priceBookPaths(ctx, opts.prices);
  loadPriceBook(book.path, book.overlay);
  const outDir = opts.outDir !== undefined ? resolve(ctx.cwd, opts.outDir) : reportOutDir(ctx);
  checkWritableDir(opts.outDir !== undefined ? '--out' : 'report.out_dir', outDir);
  if (!existsSync(ctx.dbPath)) throw new StoreMissingError(ctx.dbPath);
  return { outDir, book };
}

export async function writeReport(
  ctx: CommandContext,
  opts: WriteReportOptions,
  prepared: PreparedReport = prepareReport(ctx, opts),
): Promise<ReportResult> {
  // Loaded here: the report writers (Parquet, Excel) are only needed when a report is written, which
  // for the daemon is once a month.
  const { runReport } = await import('../report/run.js');
  const { book, outDir } = prepared;
  const store = await openCommandStore(ctx, ctx.log, {
    create: false,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  try {
    return await runReport({
      store,
      ...(opts.month ? { month: opts.month } : {}),
      ...(opts.from ? { from: opts.from } : {}),
      ...(opts.to ? { to: opts.to } : {}),
      outDir,
      // runReport refuses a format it does not write, with a message naming the ones it does.
      formats: opts.formats ?? ctx.config.report.formats,
      priceBookPath: book.path,
      ...(book.overlay ? { priceOverlayPath: book.overlay } : {}),
      ...(opts.requireComplete ? { requireComplete: true } : {}),
      ...(opts.finalize ? { finalize: true } : {}),
      ...(opts.now ? { now: opts.now } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      memoryLimit: ctx.config.report.memory_limit,
      log: ctx.log,
    });
  } catch (err) {
    // DuckDB's own advice (SET memory_limit, SET threads) is not what an operator can do: name the keys.
    if (isOutOfMemory(err)) {
      throw new Error(
        `the report ran out of DuckDB memory (report.memory_limit = ${ctx.config.report.memory_limit}): ` +
          `${(err as Error).message.split('\n')[0]}. No report file was changed; raise report.memory_limit ` +
          `in the config and run the report again.`,
        { cause: err },
      );
    }
    throw err;
  } finally {
    await store.close();
  }
}
