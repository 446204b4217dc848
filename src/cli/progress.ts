// What a collection is doing, for whoever watches. On a terminal: one bar with the phase, requests done of
// requests planned, values loaded and an ETA from the plan and the pace; log lines print above it. Off a
// terminal: one JSON line on stderr per phase change (the log lines are JSON there too). Either way, a small
// progress file beside the run lock lets `status` answer while the run holds the database.
import cliProgress from 'cli-progress';
import type { Source } from '../domain/granularity.js';
import type { CollectPhase, CollectProgress } from '../collect/collect.js';
import type { CollectOnceResult } from '../app/collect.js';
import { writeRunProgress } from '../app/lock.js';
import { setStderrSink } from '../log.js';

/** The progress file is rewritten at most this often. */
const FILE_EVERY_MS = 1_000;

export type CliProgress = CollectProgress & { stop(): void; startFile(dbPath: string): void };

export function collectProgress(opts: { json: boolean; stream?: NodeJS.WriteStream }): CliProgress {
  const stream = opts.stream ?? process.stderr;
  const tty = !!stream.isTTY;
  const started = Date.now();
  let phase: CollectPhase = 'organizations';
  let planned = 0;
  let values = 0;
  let requestsDone: () => number = () => 0;
  let dbPath: string | null = null;
  let lastFile = 0;

  const { multi, bar } = tty ? terminalBar(stream, phase) : { multi: null, bar: null };

  const refresh = (force = false) => {
    const done = requestsDone();
    if (done > planned) planned = done;
    if (bar) {
      bar.setTotal(Math.max(planned, 1));
      bar.update(done, { phase, values: values.toLocaleString('en-US'), eta_text: eta(planned, done, started) });
    }
    const now = Date.now();
    if (dbPath && (force || now - lastFile >= FILE_EVERY_MS)) {
      lastFile = now;
      writeRunProgress(dbPath, {
        pid: process.pid,
        started_at: new Date(started).toISOString(),
        phase,
        requests_done: done,
        requests_planned: planned,
        values_loaded: values,
        updated_at: new Date(now).toISOString(),
      });
    }
  };

  return {
    attach(fn) {
      requestsDone = fn;
    },
    onPlanned(requests: number) {
      planned = Math.max(requests, requestsDone());
      refresh();
    },
    onPage(_source: Source, n: number) {
      values += n;
      refresh();
    },
    onPhase(next: CollectPhase, detail?: Record<string, unknown>) {
      phase = next;
      if (!tty) writePhaseLine(stream, opts.json, next, detail, { done: requestsDone(), planned, values });
      refresh(true);
    },
    startFile(path: string) {
      dbPath = path;
      refresh(true);
    },
    stop() {
      if (multi) {
        refresh();
        multi.stop();
        setStderrSink(null);
      }
    },
  };
}

/** Off a terminal, a phase is a log line: with its counts, or only its name under --json. */
function writePhaseLine(
  stream: NodeJS.WriteStream,
  json: boolean,
  next: CollectPhase,
  detail: Record<string, unknown> | undefined,
  counts: { done: number; planned: number; values: number },
): void {
  if (!json) {
    stream.write(
      JSON.stringify({
        time: new Date().toISOString(),
        level: 'info',
        msg: 'phase',
        phase: next,
        requests_done: counts.done,
        requests_planned: counts.planned,
        values_loaded: counts.values,
        ...detail,
      }) + '\n',
    );
  } else {
    stream.write(JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'phase', phase: next }) + '\n');
  }
}

/** The bar on a terminal; log lines print above it while it is shown. */
function terminalBar(
  stream: NodeJS.WriteStream,
  phase: CollectPhase,
): { multi: cliProgress.MultiBar; bar: cliProgress.SingleBar } {
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format: '{phase} {bar} {value}/{total} requests | {values} values | ETA {eta_text}',
      hideCursor: true,
      fps: 5,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  const bar = multi.create(1, 0, { phase, values: '0', eta_text: '…' });
  setStderrSink((line) => multi.log(line + '\n'));
  return { multi, bar };
}

/** The time left at the pace so far, e.g. 1h05m, 3m07s, 12s; an ellipsis before the first request. */
function eta(planned: number, done: number, started: number): string {
  const left = Math.max(0, planned - done);
  const elapsed = (Date.now() - started) / 1000;
  if (done === 0 || elapsed <= 0) return '…';
  const s = Math.round(left / (done / elapsed));
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : s >= 60
      ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

/** The run's summary as one JSON object: the fields `status --json` shows for the last run. */
export function runSummary(r: CollectOnceResult): Record<string, unknown> {
  return {
    time: new Date().toISOString(),
    level: r.status === 'failed' ? 'error' : r.status === 'complete' ? 'info' : 'warn',
    msg: 'run finished',
    runId: r.runId,
    command: 'collect',
    status: r.status,
    requests: r.requests,
    retries: r.retries,
    throttled: r.throttled,
    pages: r.pages,
    rowsLoaded: r.rows,
    inventoryRequests: r.inventoryRequests,
    inventoryRemaining: r.inventoryRemaining,
    error: r.error ?? null,
    durationMs: r.durationMs,
    analystCopy: r.analystCopy,
  };
}

/** The demo's bar: the same display, without a progress file. */
export function terminalProgress(stream: NodeJS.WriteStream = process.stderr): CliProgress | undefined {
  return stream.isTTY ? collectProgress({ json: false, stream }) : undefined;
}
