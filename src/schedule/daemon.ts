// The scheduler behind `usage-pipeline schedule`: node-cron fires the jobs; the jobs run one at a time
// in this process, each holding the cross-process run lock, so a job never overlaps itself, another job
// or a `collect` started from crontab. Missed runs are caught up from what the database and the report
// directory hold, not from cron's memory. stop() abandons the batch in progress (the collector rolls it
// back), releases the lock and returns within a few seconds.
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import type { Granularity } from '../domain/granularity.js';
import { clientSettings, commandContext, type CommandContext, type CommonOptions } from '../app/context.js';
import { UsageError } from '../domain/errors.js';
import type { Logger } from '../log.js';
import { previousMonth } from '../domain/calendar.js';
import {
  dueExport,
  JOB_GRANULARITIES,
  runCollectJob,
  runExportJob,
  type JobName,
  type JobOutcome,
  type JobResult,
} from './jobs.js';
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
  const scheduler = new JobScheduler(opts);
  scheduler.start();
  return scheduler;
}

/** The cron expression of each job, the options' over the config's; refused at start-up when malformed. */
function cronExpressions(
  opts: SchedulerOptions,
  schedule: CommandContext['config']['schedule'],
): Record<JobName, string> {
  const expressions: Record<JobName, string> = {
    hourly: opts.cron?.hourly ?? schedule.hourly_collect,
    daily: opts.cron?.daily ?? schedule.daily_collect,
    monthly: opts.cron?.monthly ?? schedule.monthly_export,
  };
  const key: Record<JobName, string> = {
    hourly: 'schedule.hourly_collect',
    daily: 'schedule.daily_collect',
    monthly: 'schedule.monthly_export',
  };
  for (const job of ['hourly', 'daily', 'monthly'] as const) {
    if (!cron.validate(expressions[job])) {
      throw new UsageError(
        `${key[job]} "${expressions[job]}" is not a cron expression: use five fields (minute hour day month weekday), e.g. "7 * * * *".`,
      );
    }
  }
  return expressions;
}

/**
 * The daemon: the constructor checks the settings, start() schedules the jobs (and the start-up catch-up),
 * run() runs one job under the run lock, stop() winds down. Runs are queued one behind the other on `chain`.
 */
class JobScheduler implements Scheduler {
  readonly log: Logger;
  readonly jobs: ScheduledJob[] = [];
  readonly runs: JobRun[] = [];
  readonly done: Promise<void>;
  private readonly ctx: CommandContext;
  private readonly now: () => number;
  private readonly tz: string;
  private readonly baseUrl: string | undefined;
  private readonly expressions: Record<JobName, string>;
  private readonly enabled: JobName[];
  private readonly stopController = new AbortController();
  private readonly queued = new Set<JobName>();
  private readonly tasks: ScheduledTask[] = [];
  private chain: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | null = null;
  private monthlyTask: ScheduledTask | undefined;
  private markDone!: () => void;

  constructor(private readonly opts: SchedulerOptions) {
    const ctx = commandContext(opts);
    this.ctx = ctx;
    this.log = ctx.log.child({ component: 'schedule' });
    this.now = opts.now ?? drivenClock(ctx.env) ?? Date.now;
    this.tz = ctx.config.schedule.timezone;
    this.baseUrl = opts.baseUrl ?? ctx.env.USAGE_BASE_URL;
    checkTimeZone(this.tz);
    // Refuse a missing key or a bad base URL now, not an hour from now in the first job's log.
    clientSettings(ctx, this.baseUrl, opts.insecureHttp);
    this.expressions = cronExpressions(opts, ctx.config.schedule);
    this.enabled = [
      ...(this.granularities('hourly').length ? (['hourly'] as const) : []),
      ...(this.granularities('daily').length ? (['daily'] as const) : []),
      'monthly',
    ];
    this.done = new Promise<void>((r) => (this.markDone = r));
  }

  /** Schedules the enabled jobs and, unless told not to, queues the start-up catch-up. */
  start(): void {
    const log = this.log;
    const cronLogger = {
      info: (m: string) => log.debug(m),
      warn: (m: string) => log.warn(m),
      error: (m: string | Error, e?: Error) =>
        log.error(String(m instanceof Error ? m.message : m), e ? { error: e.message } : {}),
      debug: (m: string | Error) => log.debug(String(m instanceof Error ? m.message : m)),
    };
    for (const job of this.enabled) {
      const task = cron.schedule(
        this.expressions[job],
        () => {
          void this.enqueue(job, 'schedule');
        },
        { name: `usage-pipeline ${job}`, timezone: this.tz, logger: cronLogger },
      );
      // The machine slept or the event loop stalled through a slot: run once on waking.
      task.on('execution:missed', () => void this.enqueue(job, 'missed'));
      this.tasks.push(task);
      if (job === 'monthly') this.monthlyTask = task;
      this.jobs.push({
        name: job,
        expression: this.expressions[job],
        description: describeJob(job, (j) => this.granularities(j)),
        nextRun: () => task.getNextRun(),
      });
    }

    if (this.opts.catchUp ?? true) {
      // Whatever was missed while the daemon was down: collection picks up from what the database holds,
      // and the export check looks for the previous month's manifest.
      for (const job of this.enabled) if (job !== 'monthly') void this.enqueue(job, 'startup');
      if (!this.enabled.includes('daily')) void this.chain.then(() => (this.stopping ? undefined : this.exportCheck()));
    }
  }

  trigger(job: JobName, reason: JobTrigger = 'manual'): Promise<JobRun | null> {
    return this.enqueue(job, reason);
  }

  async idle(): Promise<void> {
    // Jobs queued by a finishing job (the export catch-up) extend the chain: wait until it stays put.
    for (;;) {
      const c = this.chain;
      await c;
      if (c === this.chain) return;
    }
  }

  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      const log = this.log;
      log.info('stopping: no new jobs; abandoning the batch in progress');
      for (const t of this.tasks) await t.destroy();
      this.stopController.abort(new Error('the scheduler is stopping'));
      const grace = this.opts.stopGraceMs ?? STOP_GRACE_MS;
      const finished = await Promise.race([this.chain.then(() => true), delay(grace, false, { ref: false })]);
      if (!finished)
        log.warn(
          `the job in progress did not end within ${grace} ms; exiting anyway (its uncommitted batch is discarded)`,
        );
      else log.info('stopped');
      this.markDone();
    })();
    return this.stopping;
  }

  /** Runs one job now, under the run lock; never throws (a failure is the run's outcome). */
  async run(job: JobName, trigger: JobTrigger): Promise<JobRun> {
    const { ctx, now } = this;
    const jlog = this.log.child({ job });
    const run = this.record({
      job,
      trigger,
      started_at: new Date(now()).toISOString(),
      finished_at: null,
      outcome: 'running',
    });
    const finish = (outcome: JobOutcome, fields: Partial<JobRun> = {}, at: number = now()) => {
      Object.assign(run, fields, { outcome, finished_at: new Date(at).toISOString() });
      return run;
    };
    if (this.stopController.signal.aborted) return finish('skipped', { detail: 'the scheduler is stopping' });

    const lock = await this.takeLock(job, jlog);
    if ('outcome' in lock) return finish(lock.outcome, { detail: lock.detail });

    const started = Date.now();
    // The run ends when its lock is released (runHolding's endedAt): a collect waiting for the lock starts
    // after this run's finished_at, never before it.
    const { endedAt, ...result } = await this.runHolding(job, lock, jlog, trigger);
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
    finish(result.outcome, fields, endedAt);
    // Written after the lock is released: the textfile is this job's own, and a failure to write it is only logged.
    await writeRunMetrics(
      { ...ctx, log: jlog },
      {
        command: `schedule_${job}`,
        outcome: result.outcome,
        startedMs: started,
        finishedMs: Date.now(),
        ...(result.requests !== undefined ? { requests: result.requests, throttled: result.throttled ?? 0 } : {}),
      },
    );

    if (job === 'daily' && !this.stopController.signal.aborted) this.exportCheck();
    return run;
  }

  /** The run lock for `job`, or why the run ends without it (skipped or failed, already logged). */
  private async takeLock(
    job: JobName,
    jlog: Logger,
  ): Promise<RunLock | { outcome: 'skipped' | 'failed'; detail: string }> {
    const { ctx, opts, stopController } = this;
    try {
      return await acquireRunLock(ctx.dbPath, {
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
        return { outcome: 'skipped', detail };
      }
      if (stopController.signal.aborted) return { outcome: 'skipped', detail: 'the scheduler is stopping' };
      jlog.error('job failed: cannot take the run lock', { error: (err as Error).message });
      const t = Date.now();
      await writeRunMetrics(
        { ...ctx, log: jlog },
        { command: `schedule_${job}`, outcome: 'failed', startedMs: t, finishedMs: t },
      );
      return { outcome: 'failed', detail: (err as Error).message };
    }
  }

  /** The job's own work, with the lock held; the lock is released before this returns, at endedAt. */
  private async runHolding(
    job: JobName,
    lock: RunLock,
    jlog: Logger,
    trigger: JobTrigger,
  ): Promise<JobResult & { endedAt: number }> {
    const { ctx, now, baseUrl, opts, stopController } = this;
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
      result =
        job === 'monthly'
          ? await runExportJob(env, previousMonth(now(), this.tz))
          : await runCollectJob(env, this.granularities(job));
    } catch (err) {
      // A failing job never takes the daemon down: it is logged and runs again at its next slot.
      const message = (err as Error).message ?? String(err);
      result = { outcome: stopController.signal.aborted ? 'interrupted' : 'failed', detail: message };
    }
    const endedAt = now();
    await lock.release();
    return { ...result, endedAt };
  }

  private enqueue(job: JobName, trigger: JobTrigger): Promise<JobRun | null> {
    const { log, now } = this;
    if (this.stopping) return Promise.resolve(null);
    if (this.queued.has(job)) {
      // A job never overlaps itself: the run in progress (or already queued) covers this slot too, since
      // collection is incremental from the database.
      const detail = `the previous ${job} run is still in progress`;
      if (trigger === 'missed') log.debug(`${job}: missed slot already covered by a queued run`);
      else log.warn(`${job}: skipped: ${detail}`);
      this.record({
        job,
        trigger,
        started_at: new Date(now()).toISOString(),
        finished_at: new Date(now()).toISOString(),
        outcome: 'skipped',
        detail,
      });
      return Promise.resolve(null);
    }
    this.queued.add(job);
    const p = this.chain.then(() => this.run(job, trigger)).finally(() => this.queued.delete(job));
    this.chain = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }

  private exportCheck(): void {
    const month = dueExport({
      now: this.now(),
      timeZone: this.tz,
      exportDay: this.ctx.config.schedule.monthly_export_day,
      outDir: reportOutDir(this.ctx),
      nextSlot: this.monthlyTask?.getNextRun()?.getTime() ?? null,
    });
    if (month) {
      this.log.info('monthly export is due and its manifest is missing: catching up', { month });
      void this.enqueue('monthly', 'catch-up');
    }
  }

  private record(run: JobRun): JobRun {
    this.runs.push(run);
    if (this.runs.length > RUNS_KEPT) this.runs.splice(0, this.runs.length - RUNS_KEPT);
    return run;
  }

  private granularities(job: 'hourly' | 'daily'): Granularity[] {
    const configured = new Set<Granularity>(this.ctx.config.collect.granularities);
    return JOB_GRANULARITIES[job].filter((g) => configured.has(g));
  }
}

function describeJob(job: JobName, granularities: (job: 'hourly' | 'daily') => Granularity[]): string {
  if (job === 'monthly') return 'export of the previous month';
  return `collection (${granularities(job).join(', ')})`;
}

/**
 * Names a file holding one ISO instant that the daemon takes as "now", read at each use, so a soak can
 * move the daemon's clock with the sandbox's. Unset in production: the daemon then uses the real clock.
 */
export const CLOCK_FILE_ENV = 'USAGE_SCHEDULE_CLOCK_FILE';

function drivenClock(env: NodeJS.ProcessEnv): (() => number) | undefined {
  const file = env[CLOCK_FILE_ENV];
  if (!file) return undefined;
  const read = (): number => {
    const ms = Date.parse(readFileSync(file, 'utf8').trim());
    if (Number.isNaN(ms)) throw new UsageError(`${CLOCK_FILE_ENV}: ${file} does not hold an ISO date-time.`);
    return ms;
  };
  read(); // refused at start-up, not in the first job
  return read;
}

function checkTimeZone(tz: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw new UsageError(
      `schedule.timezone "${tz}" is not a time zone: use an IANA name such as "UTC" or "Europe/Berlin".`,
    );
  }
}
