// One phase of the benchmark in its own process, as an operator runs it (one command per process, from
// cron): a collect through the product's collect command, or a report through runReport with the
// report command's memory limit. Prints one JSON line: what the phase did and what it cost, its peak RSS
// being the process's own high-water mark (VmHWM), so no phase carries memory an earlier one left.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CollectProgress } from '../src/collect/types.js';
import type { Granularity } from '../src/domain/granularity.js';
import { createLogger } from '../src/log.js';
import { httpSpan, measure, procMemoryMb, type HttpSpan, type PhaseMeasure } from './measure.js';

export type PhaseSpec =
  | {
      kind: 'collect';
      root: string;
      db: string;
      apiKey: string;
      baseUrl: string;
      now: number;
      granularity: Granularity;
      from: string;
      to: string;
      profile?: string;
      /** A config file (the capacity runs set api.rate_limit in it); default: the project's own. */
      config?: string;
    }
  | {
      kind: 'report';
      root: string;
      db: string;
      outDir: string;
      now: number;
      formats: ('parquet' | 'xlsx')[];
      month?: string;
      from?: string;
      to?: string;
    };

export interface CollectOutcome {
  requests: number;
  retries: number;
  throttled: number;
  rows: number;
  exitCode: number;
}
export interface ReportOutcome {
  dir: string;
  files: { path: string; rows: number }[];
  rows: Record<string, number>;
  partial: boolean;
}
/** The collector's phases after the last answer, each announced through its progress when it starts. */
export type EndPhase = 'checkpoint' | 'alerts' | 'publishing';

/** Seconds since this process started (performance's time origin): its first request created, the last
 *  answer received before its end phases (the alerts' own requests come after), the start of each end phase
 *  the run went through, and the phase's end. Start-up is the first; the end of the phase (the last
 *  commits, checkpoint, alerts, publishing) follows the last answer. */
export interface PhaseTiming {
  firstRequestS: number | null;
  lastAnswerS: number | null;
  endPhasesS?: Partial<Record<EndPhase, number>>;
  endS: number;
}
export interface PhaseOutput<T> {
  result: T;
  m: PhaseMeasure;
  timing?: PhaseTiming;
}

/** A progress that notes when each end phase starts; at the first, the collection's requests are over. */
function endPhaseTimes(span: HttpSpan): { progress: CollectProgress; started: Partial<Record<EndPhase, number>> } {
  const started: Partial<Record<EndPhase, number>> = {};
  const progress: CollectProgress = {
    onPhase(phase) {
      if (phase === 'checkpoint' || phase === 'alerts' || phase === 'publishing') {
        span.freeze();
        started[phase] = performance.now() / 1000;
      }
    },
  };
  return { progress, started };
}

type InspectorSession = import('node:inspector/promises').Session;
async function startProfiler(): Promise<InspectorSession> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  await session.post('Profiler.start');
  return session;
}

async function collectPhase(spec: Extract<PhaseSpec, { kind: 'collect' }>): Promise<PhaseOutput<CollectOutcome>> {
  const session = spec.profile ? await startProfiler() : null;
  const { collectCommand } = await import('../src/cli/collect.js');
  const span = httpSpan();
  const ends = endPhaseTimes(span);
  const { result, m } = await measure(
    () =>
      collectCommand({
        db: spec.db,
        ...(spec.config ? { config: spec.config } : {}),
        cwd: spec.root,
        env: { USAGE_API_KEY: spec.apiKey },
        baseUrl: spec.baseUrl,
        now: () => spec.now,
        granularity: spec.granularity,
        from: spec.from,
        to: spec.to,
        inventory: 'never',
        progress: ends.progress,
        log: createLogger({ level: 'warn' }),
      }),
    span,
  );
  const { firstS, lastS } = span.stop();
  const timing: PhaseTiming = {
    firstRequestS: firstS,
    lastAnswerS: lastS,
    endPhasesS: ends.started,
    endS: performance.now() / 1000,
  };
  if (session && spec.profile) {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    writeFileSync(spec.profile, JSON.stringify(profile));
  }
  const { requests, retries, throttled, rows, exitCode } = result;
  return { result: { requests, retries, throttled, rows, exitCode }, m, timing };
}

async function reportPhase(spec: Extract<PhaseSpec, { kind: 'report' }>): Promise<PhaseOutput<ReportOutcome>> {
  // Only what a report loads (the collect phase's start-up is measured without it, and the reverse).
  const [{ loadConfig }, { runReport }, { openStore }] = await Promise.all([
    import('../src/config/load.js'),
    import('../src/report/run.js'),
    import('../src/store/store.js'),
  ]);
  const log = createLogger({ level: 'warn' });
  const { config } = loadConfig({ cwd: spec.root });
  const { result, m } = await measure(async () => {
    // As the report command opens it: the store's limit, then the report's own while it runs.
    const store = await openStore({ path: spec.db, log, memoryLimit: config.store.memory_limit });
    try {
      const period = spec.month !== undefined ? { month: spec.month } : { from: spec.from!, to: spec.to! };
      return await runReport({
        store,
        ...period,
        outDir: spec.outDir,
        formats: spec.formats,
        priceBookPath: join(spec.root, 'config/prices.toml'),
        now: new Date(spec.now),
        log,
        memoryLimit: config.report.memory_limit,
      });
    } finally {
      await store.close();
    }
  });
  return {
    result: {
      dir: result.dir,
      files: result.files.map((f) => ({ path: f.path, rows: f.rows })),
      rows: result.rows,
      partial: result.partial,
    },
    m,
  };
}

const spec = JSON.parse(process.argv[2] ?? '{}') as PhaseSpec;
const out = spec.kind === 'collect' ? await collectPhase(spec) : await reportPhase(spec);
// The whole process's high-water mark: the samples every 50 ms can miss a short peak.
const hwm = procMemoryMb(process.pid)?.peak;
if (hwm !== undefined && hwm > out.m.peakRssMb) out.m.peakRssMb = hwm;
process.stdout.write(JSON.stringify(out) + '\n');
