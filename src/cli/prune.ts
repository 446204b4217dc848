// `usage-pipeline prune [--hourly-days N] [--dataset DIR] [--dry-run]`: retention, explicit. Checks the
// flags and runs prune() (src/app/prune.ts). Input is checked before anything is opened.
import { UsageError } from '../domain/errors.js';
import { prune, pruneSettings, type PruneOptions, type PruneResult } from '../app/prune.js';
import { commandContext, type CommandContext, type CommonOptions } from '../app/context.js';

export interface PruneCommandOptions extends CommonOptions {
  hourlyDays?: string | number;
  dataset?: string;
  dryRun?: boolean;
  now?: () => number;
}

/** The flags checked, before the lock is taken (main.ts). */
export function preparePruneCommand(opts: PruneCommandOptions): { ctx: CommandContext; options: PruneOptions } {
  const ctx = commandContext(opts);
  let hourlyDays: number | undefined;
  if (opts.hourlyDays !== undefined) {
    hourlyDays = Number(opts.hourlyDays);
    if (!Number.isInteger(hourlyDays))
      throw new UsageError(`--hourly-days ${opts.hourlyDays}: give a whole number of days, at least 8.`);
  }
  const options: PruneOptions = {
    ...(hourlyDays !== undefined ? { hourlyDays } : {}),
    ...(opts.dataset !== undefined ? { dataset: opts.dataset } : {}),
    ...(opts.dryRun ? { dryRun: true } : {}),
    ...(opts.now ? { now: new Date(opts.now()) } : {}),
  };
  pruneSettings(ctx, options);
  return { ctx, options };
}

export async function pruneCommand(
  opts: PruneCommandOptions & { signal?: AbortSignal },
  prep: ReturnType<typeof preparePruneCommand> = preparePruneCommand(opts),
): Promise<PruneResult> {
  return prune(prep.ctx, { ...prep.options, ...(opts.signal ? { signal: opts.signal } : {}) });
}

/** One line per table removed (or that would be), for a terminal. */
export function formatPrune(r: PruneResult): string {
  if (r.cutoff === undefined)
    return 'retention keeps everything ([store.retention] hourly_days is not set); nothing removed';
  if (r.removed.length === 0) return `nothing to prune: no hourly usage before ${r.cutoff}`;
  const verb = r.dryRun ? 'would remove' : 'removed';
  return r.removed
    .map((x) => `${verb} ${x.rows} ${x.granularity} rows of ${x.table} from ${x.from} to ${x.to}`)
    .join('\n');
}
