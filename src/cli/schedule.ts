// `usage-pipeline schedule`: runs the scheduler until SIGTERM or SIGINT, then stops it cleanly
// (the batch in progress is abandoned and rolled back, the run lock released) and returns exit 0.
import { startScheduler, type JobRun, type SchedulerOptions } from '../schedule/daemon.js';

export interface ScheduleCommandOptions extends SchedulerOptions {
  /** The signals that stop the daemon; default SIGTERM and SIGINT. */
  signals?: NodeJS.Signals[];
}

export interface ScheduleCommandResult {
  exitCode: 0;
  runs: JobRun[];
}

export async function scheduleCommand(opts: ScheduleCommandOptions = {}): Promise<ScheduleCommandResult> {
  const signals = opts.signals ?? ['SIGTERM', 'SIGINT'];
  // Listening before the scheduler starts, so that a signal during start-up still stops it cleanly; and
  // until stop() is done, so that a second signal does not kill the process mid-rollback.
  let received: NodeJS.Signals | undefined;
  let onStop!: () => void;
  const stopRequested = new Promise<void>((r) => (onStop = r));
  let log: { info(m: string): void; warn(m: string): void } | undefined;
  const onSignal = (sig: NodeJS.Signals) => {
    if (received) {
      log?.warn(`received ${sig} again: already stopping`);
      return;
    }
    received = sig;
    log?.info(`received ${sig}: stopping`);
    onStop();
  };
  for (const s of signals) process.on(s, onSignal);
  try {
    const scheduler = await startScheduler(opts);
    log = scheduler.log;
    if (received) log.info(`received ${received} during start-up: stopping`);
    for (const job of scheduler.jobs) {
      scheduler.log.info(`job ${job.name}: ${job.description}`, {
        cron: job.expression,
        next_run: job.nextRun()?.toISOString() ?? null,
      });
    }
    scheduler.log.info('scheduler running; SIGTERM or SIGINT stops it');
    await stopRequested;
    await scheduler.stop();
    return { exitCode: 0, runs: scheduler.runs };
  } finally {
    for (const s of signals) process.off(s, onSignal);
  }
}
