// `usage-pipeline export --dataset DIR [--format parquet,arrow]`: the partitioned dataset for
// engines beyond one machine (src/export/dataset.ts). Input is checked before anything is written.
import { resolve } from 'node:path';
import { UsageError } from '../config/load.js';
import { loadPriceBook } from '../billing/pricebook.js';
import { refreshPrices } from '../billing/prices.js';
import { EXPORT_FORMATS, exportDataset, type ExportFormat, type ExportResult } from '../export/dataset.js';
import { parseList } from './collect.js';
import { commandContext, openCommandStore, type CommonOptions } from './context.js';

export interface ExportCommandOptions extends CommonOptions {
  dataset?: string;
  format?: string;
  prices?: string;
  now?: () => number;
}

export async function exportCommand(opts: ExportCommandOptions): Promise<ExportResult> {
  const ctx = commandContext(opts);
  if (!opts.dataset) throw new UsageError('say where the dataset goes: --dataset DIR (a folder, a mounted bucket, or a folder you sync).');
  const formats = opts.format ? parseList<ExportFormat>('--format', opts.format, EXPORT_FORMATS) : (['parquet'] as ExportFormat[]);
  if (!formats.includes('parquet')) throw new UsageError('--format must include parquet (the dataset itself); add arrow for Arrow IPC copies.');
  // The priced daily lines need the price book: a broken one is refused before anything is written.
  const book = loadPriceBook(opts.prices ? ctx.resolvePath(opts.prices) : ctx.resolvePath(ctx.config.report.prices));
  const store = await openCommandStore(ctx);
  try {
    const now = new Date((opts.now ?? Date.now)());
    await refreshPrices(store, book, now);
    return await exportDataset({ store, dir: resolve(ctx.cwd, opts.dataset), formats, now, log: ctx.log });
  } finally {
    await store.close();
  }
}
