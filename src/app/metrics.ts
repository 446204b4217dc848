// Prometheus textfile metrics ([metrics] textfile): rewritten after every run (collect, report, export,
// each daemon job) for node_exporter's textfile collector. The file is its own state: the series of
// other commands and the counters are read back from it and carried over, so nothing else is stored.
// Written to a temporary name (not *.prom, which the collector would read half-written), then renamed.
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { analystCopyPath } from '../store/publish.js';
import { openStore } from '../store/store.js';
import { packageRoot } from '../config/packageRoot.js';
import type { CommandContext } from './context.js';

export type RunOutcome = 'complete' | 'partial' | 'failed' | 'interrupted';
const OUTCOMES: readonly RunOutcome[] = ['complete', 'partial', 'failed', 'interrupted'];

export interface RunRecord {
  /** collect, report, export, or the daemon's schedule_hourly, schedule_daily, schedule_monthly. */
  command: string;
  outcome: RunOutcome;
  startedMs: number;
  finishedMs: number;
  requests?: number;
  throttled?: number;
}

const M = 'usage_pipeline_';
/** Every series written: name, type, help. The order is the file's. */
const FAMILIES: [string, 'gauge' | 'counter', string][] = [
  [`${M}build_info`, 'gauge', 'The version writing this file'],
  [`${M}last_run_timestamp_seconds`, 'gauge', 'When the command last finished, whatever its outcome'],
  [`${M}last_success_timestamp_seconds`, 'gauge', 'When the command last finished complete or partial'],
  [`${M}last_run_outcome`, 'gauge', 'The last outcome of the command: 1 on its outcome, 0 on the others'],
  [`${M}last_run_duration_seconds`, 'gauge', 'How long the command last ran'],
  [`${M}api_requests_total`, 'counter', 'API requests sent, retries included'],
  [`${M}api_throttled_total`, 'counter', 'API answers 429 (rate limited)'],
  [
    `${M}data_as_of_timestamp_seconds`,
    'gauge',
    'End of the complete data of a source and granularity (the oldest organization)',
  ],
  [`${M}database_size_bytes`, 'gauge', 'Size of the database file and its write-ahead log'],
  [
    `${M}analyst_copy_timestamp_seconds`,
    'gauge',
    'When the analyst copy was last published (its age is time() minus this)',
  ],
];

/** One series per key `name{labels}`, labels in a fixed order. */
export type Series = Map<string, number>;

const key = (name: string, labels: Record<string, string> = {}) => {
  const l = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`))}"`,
  );
  return l.length ? `${name}{${l.join(',')}}` : name;
};

/** The series of a file this module wrote (comments and foreign lines are dropped). */
export function parseTextfile(text: string): Series {
  const out: Series = new Map();
  for (const line of text.split('\n')) {
    const m = /^(usage_pipeline_\w+(?:\{.*\})?) (\S+)$/.exec(line);
    if (m && Number.isFinite(Number(m[2]))) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** The previous series with this run's laid over them (counters add up). Pure. */
export function mergeRun(prev: Series, run: RunRecord): Series {
  const s: Series = new Map(prev);
  const cmd = { command: run.command };
  const secs = (ms: number) => ms / 1000;
  s.set(key(`${M}last_run_timestamp_seconds`, cmd), secs(run.finishedMs));
  if (run.outcome === 'complete' || run.outcome === 'partial')
    s.set(key(`${M}last_success_timestamp_seconds`, cmd), secs(run.finishedMs));
  for (const o of OUTCOMES) s.set(key(`${M}last_run_outcome`, { ...cmd, outcome: o }), o === run.outcome ? 1 : 0);
  s.set(key(`${M}last_run_duration_seconds`, cmd), secs(run.finishedMs - run.startedMs));
  if (run.requests !== undefined) {
    const add = (name: string, n: number) => s.set(key(name, cmd), (s.get(key(name, cmd)) ?? 0) + n);
    add(`${M}api_requests_total`, run.requests);
    add(`${M}api_throttled_total`, run.throttled ?? 0);
  }
  return s;
}

/** The exposition format: each family's HELP and TYPE, then its series. */
export function renderTextfile(s: Series): string {
  const lines: string[] = [];
  for (const [name, type, help] of FAMILIES) {
    const rows = [...s].filter(([k]) => k === name || k.startsWith(`${name}{`)).sort(([a], [b]) => (a < b ? -1 : 1));
    if (!rows.length) continue;
    lines.push(`# HELP ${name} ${help}.`, `# TYPE ${name} ${type}`, ...rows.map(([k, v]) => `${k} ${v}`));
  }
  return lines.join('\n') + '\n';
}

/** What the database says now: its size, the analyst copy's time, and the data's end per source and granularity. */
async function storeSeries(ctx: CommandContext, s: Series): Promise<void> {
  const size = ['', '.wal'].reduce(
    (n, ext) => n + (existsSync(ctx.dbPath + ext) ? statSync(ctx.dbPath + ext).size : 0),
    0,
  );
  s.set(key(`${M}database_size_bytes`), size);
  const copy = analystCopyPath(ctx.dbPath);
  if (!existsSync(copy)) return;
  s.set(key(`${M}analyst_copy_timestamp_seconds`), Math.floor(statSync(copy).mtimeMs) / 1000);
  // The copy, not the database: it is never locked by a writer, and it is what analysts see.
  const store = await openStore({ path: copy, readOnly: true, log: ctx.log });
  try {
    const asOf = new Map<string, number>();
    for (const c of await store.coverage.summary()) {
      if (!c.lastCompleteEnd) continue;
      const k = key(`${M}data_as_of_timestamp_seconds`, { source: c.source, granularity: c.granularity });
      asOf.set(k, Math.min(asOf.get(k) ?? Infinity, c.lastCompleteEnd.getTime() / 1000));
    }
    for (const [k, v] of asOf) s.set(k, v);
  } finally {
    await store.close();
  }
}

/** Rewrites the configured textfile with this run; nothing when none is configured. Never throws. */
export async function writeRunMetrics(ctx: CommandContext, run: RunRecord): Promise<void> {
  const file = ctx.config.metrics.textfile;
  if (!file) return;
  try {
    const prev = existsSync(file) ? parseTextfile(readFileSync(file, 'utf8')) : new Map<string, number>();
    const s = mergeRun(prev, run);
    const version = (JSON.parse(readFileSync(`${packageRoot()}/package.json`, 'utf8')) as { version: string }).version;
    for (const k of [...s.keys()]) if (k.startsWith(`${M}build_info`)) s.delete(k);
    s.set(key(`${M}build_info`, { version }), 1);
    await storeSeries(ctx, s).catch((err: unknown) =>
      ctx.log.warn('metrics: the database could not be read; its series keep their last values', {
        error: (err as Error).message,
      }),
    );
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, renderTextfile(s));
    renameSync(tmp, file);
  } catch (err) {
    // A monitoring file must never fail the run it describes: the stale file then shows it.
    ctx.log.warn(`metrics: cannot write ${file}`, { error: (err as Error).message });
  }
}

/** The outcome of a command's result (collect's status; report's and export's exit code). */
export function outcomeOf(result: unknown): RunOutcome {
  const r = result as { status?: string; exitCode?: number };
  if (r.status && (OUTCOMES as readonly string[]).includes(r.status)) return r.status as RunOutcome;
  return r.exitCode === 2 ? 'partial' : r.exitCode === 1 ? 'failed' : 'complete';
}

/** Runs a command and writes its metrics, whatever the outcome (an error is rethrown). */
export async function withRunMetrics<T>(
  ctx: CommandContext,
  command: string,
  signal: AbortSignal,
  fn: () => Promise<T>,
): Promise<T> {
  const startedMs = Date.now();
  const record = (outcome: RunOutcome, r?: { requests?: number; throttled?: number }) =>
    writeRunMetrics(ctx, {
      command,
      outcome,
      startedMs,
      finishedMs: Date.now(),
      ...(r?.requests !== undefined ? { requests: r.requests, throttled: r.throttled ?? 0 } : {}),
    });
  try {
    const out = await fn();
    await record(outcomeOf(out), out as { requests?: number; throttled?: number });
    return out;
  } catch (err) {
    await record(signal.aborted ? 'interrupted' : 'failed');
    throw err;
  }
}
