// exportDataset(): the partitioned dataset (src/export/dataset.ts) with everything wired (store, price
// book from the configuration unless given), for the CLI. The price tables are brought in step with the
// book first, since the priced daily lines are part of the dataset.
import { loadPriceBook } from '../billing/pricebook.js';
import type { ExportFormat } from '../domain/formats.js';
import { exportDataset as writeDataset, type ExportResult } from '../export/dataset.js';
import { refreshPrices } from '../report/prices.js';
import { openCommandStore, priceBookPaths, type CommandContext } from './context.js';

export interface ExportDatasetOptions {
  /** The dataset's root folder. Resolved against the working directory. */
  dir: string;
  /** Default: parquet only. */
  formats?: readonly ExportFormat[];
  /** Default: the configuration's report.prices (and its price_overlay). A given one: against the working directory. */
  prices?: string;
  now?: Date;
  /** The run's stop: the store's open, then between partitions (each written one stays whole and recorded). */
  signal?: AbortSignal;
}

export async function exportDataset(ctx: CommandContext, opts: ExportDatasetOptions): Promise<ExportResult> {
  // A broken price book is refused before anything is opened or written.
  const paths = priceBookPaths(ctx, opts.prices);
  const book = loadPriceBook(paths.path, paths.overlay);
  const store = await openCommandStore(ctx, ctx.log, opts.signal ? { signal: opts.signal } : {});
  try {
    const now = opts.now ?? new Date();
    opts.signal?.throwIfAborted();
    await refreshPrices(store, book, now);
    return await writeDataset({
      store,
      dir: opts.dir,
      formats: opts.formats ?? ['parquet'],
      now,
      log: ctx.log,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } finally {
    await store.close();
  }
}
