// The daemon's jobs: what each one does once it holds the run lock, and whether the export of the
// previous month (in the configured time zone) is due. Scheduling lives in daemon.ts.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Granularity } from '../domain/granularity.js';
import { localDate, previousMonth, sameDay } from '../domain/calendar.js';
import { collectOnce } from '../app/collect.js';
import type { CommandContext } from '../app/context.js';
import { writeReport } from '../app/report.js';
import type { Logger } from '../log.js';

export type JobName = 'hourly' | 'daily' | 'monthly';

/** What each collection job asks for; the config's collect.granularities narrows it. */
export const JOB_GRANULARITIES: Record<'hourly' | 'daily', readonly Granularity[]> = {
  hourly: ['hourly'],
  // Monthly buckets change at most once a day's worth, so the daily job collects them too.
  daily: ['daily', 'monthly'],
};

export type JobOutcome = 'complete' | 'partial' | 'failed' | 'skipped' | 'interrupted';

export interface JobResult {
  outcome: Exclude<JobOutcome, 'skipped'>;
  detail?: string;
  runId?: string;
  rows?: number;
  month?: string;
  reportDir?: string;
  /** A collection's API requests and 429 answers (for the metrics). */
  requests?: number;
  throttled?: number;
}

export interface JobEnv {
  ctx: CommandContext;
  /** The --base-url the daemon was started with. */
  baseUrl?: string;
  insecureHttp?: boolean;
  now: () => number;
  log: Logger;
  signal: AbortSignal;
}

/** Collects the given granularities, incrementally from what the database holds. */
export async function runCollectJob(env: JobEnv, granularities: readonly Granularity[]): Promise<JobResult> {
  const r = await collectOnce(
    { ...env.ctx, log: env.log },
    {
      granularities,
      ...(env.baseUrl !== undefined ? { baseUrl: env.baseUrl } : {}),
      ...(env.insecureHttp ? { insecureHttp: true } : {}),
      now: env.now,
      signal: env.signal,
    },
  );
  // Stopped part-way: the batches committed before the stop are kept, the one in progress was rolled back.
  const outcome: JobResult['outcome'] = env.signal.aborted && r.status !== 'complete' ? 'interrupted' : r.status;
  return {
    outcome,
    runId: r.runId,
    rows: r.rows,
    requests: r.requests,
    throttled: r.throttled,
    ...(r.error ? { detail: r.error } : {}),
  };
}

/** Writes the reports of one billing month (YYYY-MM) under the configured output directory. */
export async function runExportJob(env: JobEnv, month: string): Promise<JobResult> {
  const r = await writeReport({ ...env.ctx, log: env.log }, { month, now: new Date(env.now()) });
  return {
    outcome: r.partial ? 'partial' : 'complete',
    month,
    reportDir: r.dir,
    ...(r.partial ? { detail: 'coverage of the month is partial' } : {}),
  };
}

/** The manifest is written last, so its presence means the month's export finished. */
export function manifestPath(outDir: string, month: string): string {
  return join(outDir, month, 'manifest.json');
}

/**
 * The month whose export is due and missing, or null. Due from `exportDay` of the following month on
 * (late data settles first), unless the export's own slot (`nextSlot`) is still to come today; missing
 * when its manifest.json is not on disk. This is what catches up an export the daemon slept through: it
 * looks at the output, not at cron's memory.
 */
export function dueExport(opts: {
  now: number;
  timeZone: string;
  exportDay: number;
  outDir: string;
  nextSlot?: number | null;
}): string | null {
  if (localDate(opts.now, opts.timeZone).day < opts.exportDay) return null;
  if (opts.nextSlot != null && sameDay(opts.nextSlot, opts.now, opts.timeZone)) return null;
  const month = previousMonth(opts.now, opts.timeZone);
  return existsSync(manifestPath(opts.outDir, month)) ? null : month;
}
