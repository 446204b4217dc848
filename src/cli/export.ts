// `usage-pipeline export --dataset DIR [--format parquet,arrow]`: checks the flags and runs
// exportDataset() (src/app/export.ts). Input is checked before anything is written.
import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { EXPORT_FORMATS, type ExportFormat } from '../domain/formats.js';
import type { ExportResult } from '../export/dataset.js';
import { exportDataset, type ExportDatasetOptions } from '../app/export.js';
import { parseList } from './collect.js';
import { commandContext, type CommandContext, type CommonOptions } from '../app/context.js';

export interface ExportCommandOptions extends CommonOptions {
  dataset?: string;
  format?: string;
  prices?: string;
  now?: () => number;
}

/** The flags checked and the dataset's options, before the lock is taken (main.ts). */
export function prepareExportCommand(opts: ExportCommandOptions): {
  ctx: CommandContext;
  options: ExportDatasetOptions;
} {
  const ctx = commandContext(opts);
  // The flag against the working directory; the config's [export] dataset is already absolute.
  const dir = opts.dataset ? resolve(ctx.cwd, opts.dataset) : ctx.config.export.dataset;
  if (!dir)
    throw new UsageError(
      'say where the dataset goes: --dataset DIR (a folder, a mounted bucket, or a folder you sync), or [export] dataset in the config.',
    );
  const formats = opts.format
    ? parseList<ExportFormat>('--format', opts.format, EXPORT_FORMATS)
    : (['parquet'] as ExportFormat[]);
  if (!formats.includes('parquet'))
    throw new UsageError('--format must include parquet (the dataset itself); add arrow for Arrow IPC copies.');
  return {
    ctx,
    options: {
      dir,
      formats,
      ...(opts.prices ? { prices: opts.prices } : {}),
      ...(opts.now ? { now: new Date(opts.now()) } : {}),
    },
  };
}

export async function exportCommand(
  opts: ExportCommandOptions & { signal?: AbortSignal },
  prep: ReturnType<typeof prepareExportCommand> = prepareExportCommand(opts),
): Promise<ExportResult> {
  return exportDataset(prep.ctx, { ...prep.options, ...(opts.signal ? { signal: opts.signal } : {}) });
}
