// prune(): retention as the operator configured it ([store.retention]). Removes hourly usage older than
// hourly_days whole UTC days, never daily or monthly. With a dataset configured, every day it would
// remove must be in that dataset exactly (the file's recorded fingerprint equals the rows' own, and the
// file is there); otherwise nothing is removed and the message says which day to export first. Each
// removal is logged and recorded (usage_removals, under a collection run of command 'prune'), so the
// next export re-checks the priced months whose hourly coverage went.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { startOfDayAt } from '../domain/calendar.js';
import { DATASET_LAYOUT, type HourlyDay, type Removal, type Store } from '../store/store.js';
import { openCommandStore, type CommandContext } from './context.js';

export interface PruneOptions {
  /** Default: [store.retention] hourly_days. */
  hourlyDays?: number;
  /** Default: [store.retention] dataset (against the config file's folder). Given: against the working directory. */
  dataset?: string;
  /** Say what would be removed, remove nothing. */
  dryRun?: boolean;
  now?: Date;
  signal?: AbortSignal;
}

export interface PruneResult {
  /** Hourly rows before this instant are removed (undefined: retention keeps everything). */
  cutoff?: string;
  dataset?: string;
  dryRun: boolean;
  removed: { table: string; granularity: 'hourly'; from: string; to: string; rows: number }[];
  runId?: string;
}

/** The first UTC midnight at least `days` days before `now`. */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(startOfDayAt(now.getTime()) - days * 86_400_000);
}

/** Checked before anything is opened: the settings prune runs with. */
export function pruneSettings(ctx: CommandContext, o: PruneOptions): { hourlyDays?: number; dataset?: string } {
  const r = ctx.config.store.retention;
  const hourlyDays = o.hourlyDays ?? r.hourly_days;
  if (hourlyDays !== undefined && (!Number.isInteger(hourlyDays) || hourlyDays < 8)) {
    throw new UsageError(
      `--hourly-days ${hourlyDays}: give whole days, at least 8 (the API serves hourly data for 168 hours).`,
    );
  }
  const dataset =
    o.dataset !== undefined
      ? resolve(ctx.cwd, o.dataset)
      : r.dataset !== undefined
        ? ctx.resolvePath(r.dataset)
        : undefined;
  return { ...(hourlyDays !== undefined ? { hourlyDays } : {}), ...(dataset !== undefined ? { dataset } : {}) };
}

const UNIT_STREAM: Record<HourlyDay['table'], string> = {
  usage_program_buckets: 'usage_program',
  usage_framework_buckets: 'usage_framework',
};

/** The first day the dataset does not hold exactly, with the reason; undefined when it holds them all. */
async function notInDataset(store: Store, dataset: string, days: HourlyDay[]): Promise<string | undefined> {
  const state = await store.dataset.state(dataset);
  if (state?.layout !== DATASET_LAYOUT) return `the dataset ${dataset} has not been exported by this release yet`;
  const recorded = await store.dataset.exportedPartitions(dataset);
  for (const d of days) {
    const stream = UNIT_STREAM[d.table];
    const id = `${stream}/granularity=hourly/month=${d.day.slice(0, 7)}/part-${d.day}`;
    const f = await store.dataset.fingerprint({
      stream: stream as 'usage_program',
      granularity: 'hourly',
      month: d.day.slice(0, 7),
      day: d.day,
    });
    if (recorded.get(id) !== `v2:${f.rows}:${f.digest}`)
      return `the dataset does not hold ${stream} hourly ${d.day} as stored (run export --dataset ${dataset} first)`;
    if (!existsSync(join(dataset, `${id}.parquet`)))
      return `the dataset's file ${id}.parquet is missing (run export --dataset ${dataset} first)`;
  }
  return undefined;
}

export async function prune(ctx: CommandContext, o: PruneOptions = {}): Promise<PruneResult> {
  const settings = pruneSettings(ctx, o);
  const dryRun = o.dryRun ?? false;
  if (settings.hourlyDays === undefined) {
    ctx.log.info('retention keeps everything ([store.retention] hourly_days is not set); nothing removed');
    return { dryRun, removed: [] };
  }
  const cutoff = retentionCutoff(o.now ?? new Date(), settings.hourlyDays);
  const store = await openCommandStore(ctx, ctx.log, o.signal ? { signal: o.signal } : {});
  try {
    const days = await store.usage.hourlyDaysBefore(cutoff);
    const base: PruneResult = {
      cutoff: cutoff.toISOString(),
      dryRun,
      removed: [],
      ...(settings.dataset ? { dataset: settings.dataset } : {}),
    };
    if (days.length === 0) {
      ctx.log.info('nothing to prune', { granularity: 'hourly', before: base.cutoff });
      return base;
    }
    if (settings.dataset) {
      const missing = await notInDataset(store, settings.dataset, days);
      if (missing) throw new PruneRefusedError(`prune refused, nothing removed: ${missing}.`);
    } else ctx.log.warn('no [store.retention] dataset is configured: the pruned hourly rows are kept nowhere else');
    o.signal?.throwIfAborted();
    if (dryRun) return { ...base, removed: summarize(days, cutoff) };
    const runId = `${(o.now ?? new Date()).toISOString().replace(/[-:]/g, '').slice(0, 15)}Z-${randomUUID().slice(0, 8)}`;
    await store.runs.start({
      runId,
      command: 'prune',
      options: { hourly_days: settings.hourlyDays, dataset: settings.dataset ?? null },
    });
    const removed = await store.usage.removeHourlyBefore(runId, cutoff, days).catch(async (err: unknown) => {
      await store.runs.finish({
        runId,
        status: 'failed',
        requests: 0,
        retries: 0,
        throttled: 0,
        pages: 0,
        rowsLoaded: 0,
        error: (err as Error).message,
      });
      throw err;
    });
    await store.runs.finish({
      runId,
      status: 'complete',
      requests: 0,
      retries: 0,
      throttled: 0,
      pages: 0,
      rowsLoaded: 0,
    });
    const out = removed.map(describe);
    for (const r of out) ctx.log.info('pruned', { ...r, run_id: runId });
    await store.checkpoint();
    return { ...base, removed: out, runId };
  } finally {
    await store.close();
  }
}

function describe(r: Removal): PruneResult['removed'][number] {
  return { table: r.table, granularity: 'hourly', from: r.from.toISOString(), to: r.to.toISOString(), rows: r.rows };
}

/** What a dry run would remove, per table. */
function summarize(days: HourlyDay[], cutoff: Date): PruneResult['removed'] {
  const out: PruneResult['removed'] = [];
  for (const table of ['usage_program_buckets', 'usage_framework_buckets'] as const) {
    const mine = days.filter((d) => d.table === table);
    if (mine.length > 0)
      out.push({
        table,
        granularity: 'hourly',
        from: `${mine[0]!.day}T00:00:00.000Z`,
        to: cutoff.toISOString(),
        rows: mine.reduce((n, d) => n + d.rows, 0),
      });
  }
  return out;
}

/** The dataset does not hold what prune would remove: exit 1, nothing changed. */
export class PruneRefusedError extends Error {
  override name = 'PruneRefusedError';
}
