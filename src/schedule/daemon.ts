// The scheduler behind `usage-pipeline schedule`: node-cron fires the jobs; the jobs run one at a time
// in this process, each holding the cross-process run lock, so a job never overlaps itself, another job
// or a `collect` started from crontab. Missed runs are caught up from what the database and the report
// directory hold, not from cron's memory. stop() abandons the batch in progress (the collector rolls it
// back), releases the lock and returns within a few seconds.
import { setTimeout as delay } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import type { Granularity } from '../domain/granularity.js';
import { clientSettings, commandContext, type CommonOptions } from '../app/context.js';
import { UsageError } from '../domain/errors.js';
import type { Logger } from '../log.js';
import { previousMonth } from '../domain/calendar.js';
import { dueExport, JOB_GRANULARITIES, runCollectJob, runExportJob, type JobName, type JobOutcome, type JobResult } from './jobs.js';
import { reportOutDir } from '../app/report.js';
import { acquireRunLock, describeHolder, RunLockBusyError, type RunLock } from '../app/lock.js';
import { writeRunMetrics } from '../app/metrics.js';

export type { JobName, JobOutcome } from './jobs.js';

/** How long a job waits for the run lock before skipping to its next slot. */
export const JOB_LOCK_WAIT_MS = 10_000;
/** How long stop() waits for the job in progress to wind down before giving up on it. */
export const STOP_GRACE_MS = 4_000;
/** The daemon keeps this many recent runs in memory (for `runs`). */
const RUNS_KEPT = 200;

export type JobTrigger = 'schedule' | 'missed' | 'startup' | 'catch-up' | 'manual';

export interface JobRun {
  job: JobName;
  trigger: JobTrigger;
  started_at: string;
  finished_at: string | null;
  outcome: JobOutcome | 'running';
  detail?: string;
  run_id?: string;
  rows?: number;
  month?: string;
}

export interface ScheduledJob {
  name: JobName;
  expression: string;
  /** What the job does, for the start-up log. */
  description: string;
  nextRun(): Date | null;
}

export interface SchedulerOptions extends CommonOptions {
  baseUrl?: string;
  insecureHttp?: boolean;
  now?: () => number;
  /** Overrides of the config's cron expressions (6 fields, with seconds, are allowed). */
  cron?: { hourly?: string; daily?: string; monthly?: string };
  /** At start-up, run the collections and the export check at once (default true). */
  catchUp?: boolean;
  /** Wait for the run lock per job; default JOB_LOCK_WAIT_MS. */
  lockWaitMs?: number;
  /** Run lock stale threshold (tests); default the lock module's. */
  lockStaleMs?: number;
  /** Default STOP_GRACE_MS. */
  stopGraceMs?: number;
}

export interface Scheduler {
  /** The daemon's logger (from the options, else built from the config). */
  readonly log: Logger;
  readonly jobs: readonly ScheduledJob[];
  /** Every job run so far (the latest RUNS_KEPT), oldest first; entries update in place when a run ends. */
  readonly runs: JobRun[];
  /** Runs a job now, as its schedule would (queued behind the job in progress). Null if it was not queued. */
  trigger(job: JobName, reason?: JobTrigger): Promise<JobRun | null>;
  /** Resolves when every queued run so far has finished. */
  idle(): Promise<void>;
  stop(): Promise<void>;
  /** Resolves once stop() has finished. */
  readonly done: Promise<void>;
}

export async function startScheduler(opts: SchedulerOptions = {}): Promise<Scheduler> {
  const ctx = commandContext(opts);
  const log = ctx.log.child({ component: 'schedule' });
  const now = opts.now ?? Date.now;
  const tz = ctx.config.schedule.timezone;
  const baseUrl = opts.baseUrl ?? ctx.env.USAGE_BASE_URL;
  checkTimeZone(tz);
  // Refuse a missing key or a bad base URL now, not an hour from now in the first job's log.
  clientSettings(ctx, baseUrl, opts.insecureHttp);

  const configured = new Set<Granularity>(ctx.config.collect.granularities);
  const granularities = (job: 'hourly' | 'daily') => JOB_GRANULARITIES[job].filter((g) => configured.has(g));
  const expressions: Record<JobName, string> = {
    hourly: opts.cron?.hourly ?? ctx.config.schedule.hourly_collect,
    daily: opts.cron?.daily ?? ctx.config.schedule.daily_collect,
    monthly: opts.cron?.monthly ?? ctx.config.schedule.monthly_export,
  };
  const key: Record<JobName, string> = { hourly: 'schedule.hourly_collect', daily: 'schedule.daily_collect', monthly: 'schedule.monthly_export' };
  for (const job of ['hourly', 'daily', 'monthly'] as const) {
    if (!cron.validate(expressions[job])) {
      throw new UsageError(`${key[job]} "${expressions[job]}" is not a cron expression: use five fields (minute hour day month weekday), e.g. "7 * * * *".`);
    }
  }
  const enabled: JobName[] = [
    ...(granularities('hourly').length ? (['hourly'] as const) : []),
    ...(granularities('daily').length ? (['daily'] as const) : []),
    'monthly',
  ];

  const runs: JobRun[] = [];
  const stopController = new AbortController();
  const queued = new Set<JobName>();
  let chain: Promise<void> = Promise.resolve();
  let stopping: Promise<void> | null = null;
  let markDone!: () => void;
  const done = new Promise<void>((r) => (markDone = r));

  const record = (run: JobRun): JobRun => {
    runs.push(run);
    if (runs.length > RUNS_KEPT) runs.splice(0, runs.length - RUNS_KEPT);
    return run;
  };

  let monthlyTask: ScheduledTask | undefined;
  const exportCheck = () => {
    const month = dueExport({
      now: now(),
      timeZone: tz,
      exportDay: ctx.config.schedule.monthly_export_day,
      outDir: reportOutDir(ctx),
      nextSlot: monthlyTask?.getNextRun()?.getTime() ?? null,
    });
    if (month) {
      log.info('monthly export is due and its manifest is missing: catching up', { month });
      void enqueue('monthly', 'catch-up');
    }
  };

  async function execute(job: JobName, trigger: JobTrigger): Promise<JobRun> {
    const jlog = log.child({ job });
    const run = record({ job, trigger, started_at: new Date(now()).toISOString(), finished_at: null, outcome: 'running' });
    const finish = (outcome: JobOutcome, fields: Partial<JobRun> = {}) => {
      Object.assign(run, fields, { outcome, finished_at: new Date(now()).toISOString() });
      return run;
    };
    if (stopController.signal.aborted) return finish('skipped', { detail: 'the scheduler is stopping' });

    let lock: RunLock;
    try {
      lock = await acquireRunLock(ctx.dbPath, {
        waitMs: opts.lockWaitMs ?? JOB_LOCK_WAIT_MS,
        command: `schedule ${job}`,
        log: jlog,
        signal: stopController.signal,
        cwd: ctx.cwd,
        ...(opts.lockStaleMs !== undefined ? { staleMs: opts.lockStaleMs } : {}),
      });
    } catch (err) {
      if (err instanceof RunLockBusyError) {
        const detail = `${describeHolder(err.holder)} holds the lock`;
        jlog.warn(`skipped: ${detail}; next attempt at the next slot`);
        return finish('skipped', { detail });
      }
      if (stopController.signal.aborted) return finish('skipped', { detail: 'the scheduler is stopping' });
      jlog.error('job failed: cannot take the run lock', { error: (err as Error).message });
      const t = Date.now();
      await writeRunMetrics({ ...ctx, log: jlog }, { command: `schedule_${job}`, outcome: 'failed', startedMs: t, finishedMs: t });
      return finish('failed', { detail: (err as Error).message });
    }

    const started = Date.now();
    let result: JobResult;
    try {
      jlog.info('job started', { trigger });
      const env = {
        ctx,
        ...(baseUrl !== undefined ? { baseUrl } : {}),
        ...(opts.insecureHttp ? { insecureHttp: true } : {}),
        now,
        log: jlog,
        signal: AbortSignal.any([stopController.signal, lock.signal]),
      };
      if (job === 'monthly') result = await runExportJob(env, previousMonth(now(), tz));
      else result = await runCollectJob(env, granularities(job));
    } catch (err) {
      // A failing job never takes the daemon down: it is logged and runs again at its next slot.
      const message = (err as Error).message ?? String(err);
      result = { outcome: stopController.signal.aborted ? 'interrupted' : 'failed', detail: message };
    } finally {
      await lock.release();
    }

    const fields = {
      ...(result.detail !== undefined ? { detail: result.detail } : {}),
      ...(result.runId !== undefined ? { run_id: result.runId } : {}),
      ...(result.rows !== undefined ? { rows: result.rows } : {}),
      ...(result.month !== undefined ? { month: result.month } : {}),
    };
    const summary = { outcome: result.outcome, duration_ms: Date.now() - started, ...fields };
    if (result.outcome === 'complete') jlog.info('job finished', summary);
    else if (result.outcome === 'failed') jlog.error('job failed; it runs again at its next slot', summary);
    else jlog.warn(`job finished: ${result.outcome}`, summary);
    finish(result.outcome, fields);
    // Written after the lock is released: the textfile is this job's own, and a failure to write it is only logged.
    await writeRunMetrics({ ...ctx, log: jlog }, { command: `schedule_${job}`, outcome: result.outcome, startedMs: started, finishedMs: Date.now(), ...(result.requests !== undefined ? { requests: result.requests, throttled: result.throttled ?? 0 } : {}) });

    if (job === 'daily' && !stopController.signal.aborted) exportCheck();
    return run;
  }

  function enqueue(job: JobName, trigger: JobTrigger): Promise<JobRun | null> {
    if (stopping) return Promise.resolve(null);
    if (queued.has(job)) {
      // A job never overlaps itself: the run in progress (or already queued) covers this slot too, since
      // collection is incremental from the database.
      const detail = `the previous ${job} run is still in progress`;
      if (trigger === 'missed') log.debug(`${job}: missed slot already covered by a queued run`);
      else log.warn(`${job}: skipped: ${detail}`);
      record({ job, trigger, started_at: new Date(now()).toISOString(), finished_at: new Date(now()).toISOString(), outcome: 'skipped', detail });
      return Promise.resolve(null);
    }
    queued.add(job);
    const p = chain.then(() => execute(job, trigger)).finally(() => queued.delete(job));
    chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  const tasks: ScheduledTask[] = [];
  const cronLogger = {
    info: (m: string) => log.debug(m),
    warn: (m: string) => log.warn(m),
    error: (m: string | Error, e?: Error) => log.error(String(m instanceof Error ? m.message : m), e ? { error: e.message } : {}),
    debug: (m: string | Error) => log.debug(String(m instanceof Error ? m.message : m)),
  };
  const jobs: ScheduledJob[] = [];
  for (const job of enabled) {
    const task = cron.schedule(
      expressions[job],
      () => {
        void enqueue(job, 'schedule');
      },
      { name: `usage-pipeline ${job}`, timezone: tz, logger: cronLogger },
    );
    // The machine slept or the event loop stalled through a slot: run once on waking.
    task.on('execution:missed', () => void enqueue(job, 'missed'));
    tasks.push(task);
    if (job === 'monthly') monthlyTask = task;
    jobs.push({ name: job, expression: expressions[job], description: describeJob(job, granularities), nextRun: () => task.getNextRun() });
  }

  if (opts.catchUp ?? true) {
    // Whatever was missed while the daemon was down: collection picks up from what the database holds,
    // and the export check looks for the previous month's manifest.
    for (const job of enabled) if (job !== 'monthly') void enqueue(job, 'startup');
    if (!enabled.includes('daily')) void chain.then(() => (stopping ? undefined : exportCheck()));
  }

  const scheduler: Scheduler = {
    log,
    jobs,
    runs,
    done,
    trigger: (job, reason = 'manual') => enqueue(job, reason),
    idle: async () => {
      // Jobs queued by a finishing job (the export catch-up) extend the chain: wait until it stays put.
      for (;;) {
        const c = chain;
        await c;
        if (c === chain) return;
      }
    },
    stop: () => {
      if (stopping) return stopping;
      stopping = (async () => {
        log.info('stopping: no new jobs; abandoning the batch in progress');
        for (const t of tasks) await t.destroy();
        stopController.abort(new Error('the scheduler is stopping'));
        const grace = opts.stopGraceMs ?? STOP_GRACE_MS;
        const finished = await Promise.race([chain.then(() => true), delay(grace, false, { ref: false })]);
        if (!finished) log.warn(`the job in progress did not end within ${grace} ms; exiting anyway (its uncommitted batch is discarded)`);
        else log.info('stopped');
        markDone();
      })();
      return stopping;
    },
  };
  return scheduler;
}

function describeJob(job: JobName, granularities: (job: 'hourly' | 'daily') => Granularity[]): string {
  if (job === 'monthly') return 'export of the previous month';
  return `collection (${granularities(job).join(', ')})`;
}

function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new UsageError(`schedule.timezone "${tz}" is not a time zone: use an IANA name such as "UTC" or "Europe/Berlin".`);
  }
}

