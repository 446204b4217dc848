// Measuring one phase of the benchmark: wall time, this process's CPU (process.cpuUsage) and its
// peak RSS, sampled every 50 ms, plus another process's CPU and peak RSS read from /proc (Linux).
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';

export const RSS_SAMPLE_MS = 50;
const MB = 1024 * 1024;

/** The middle value (the mean of the middle two for an even count; 0 for none). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? 0 : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export interface PhaseMeasure {
  wallS: number;
  cpuS: number;
  peakRssMb: number;
  /** From the first HTTP request sent to the last answer received (undici's diagnostics channels), if any. */
  httpSpanS: number | null;
  /** Where the memory was at the peak RSS sample: V8's heap (committed), memory outside it that V8
   *  tracks (Buffers, strings handed to native code), and the rest (DuckDB's buffers and Node itself). */
  atPeak: { heapMb: number; externalMb: number; otherMb: number; atS?: number };
}

/** Seconds since this process started (performance's time origin) of the first request created and the
 *  last answer received, and the span between them. */
export interface HttpTimes {
  firstS: number | null;
  lastS: number | null;
  spanS: number | null;
}

/** Watches undici's request channels: the first request created and the last one completed. */
export interface HttpSpan {
  /** Answers from now on are not counted: a collection's own requests end where its end phases start
   *  (the alerts' spending-limit requests come after). */
  freeze(): void;
  stop(): HttpTimes;
}

export function httpSpan(): HttpSpan {
  let first: number | null = null;
  let last: number | null = null;
  let frozen = false;
  const onCreate = () => {
    first ??= performance.now() / 1000;
  };
  const onDone = () => {
    if (!frozen) last = performance.now() / 1000;
  };
  diagnostics.subscribe('undici:request:create', onCreate);
  diagnostics.subscribe('undici:request:trailers', onDone);
  diagnostics.subscribe('undici:request:error', onDone);
  return {
    freeze() {
      frozen = true;
    },
    stop() {
      diagnostics.unsubscribe('undici:request:create', onCreate);
      diagnostics.unsubscribe('undici:request:trailers', onDone);
      diagnostics.unsubscribe('undici:request:error', onDone);
      return { firstS: first, lastS: last, spanS: first !== null && last !== null ? last - first : null };
    },
  };
}

/** Runs `fn` while sampling this process's RSS; returns its result and what it cost. `span` watches its
 *  requests (the caller's own, to freeze it at a moment it knows). */
export async function measure<T>(
  fn: () => Promise<T>,
  span: HttpSpan = httpSpan(),
): Promise<{ result: T; m: PhaseMeasure }> {
  let at = process.memoryUsage();
  let atMs = performance.now();
  let peak = at.rss;
  const sample = () => {
    const mu = process.memoryUsage();
    if (mu.rss > peak) {
      peak = mu.rss;
      at = mu;
      atMs = performance.now();
    }
  };
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    const result = await fn();
    const wallS = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    sample();
    return {
      result,
      m: {
        wallS,
        cpuS: (cpu.user + cpu.system) / 1e6,
        peakRssMb: peak / MB,
        httpSpanS: span.stop().spanS,
        atPeak: { ...split(at), atS: Math.round(atMs) / 1000 },
      },
    };
  } finally {
    clearInterval(timer);
    span.stop();
  }
}

function split(mu: NodeJS.MemoryUsage): PhaseMeasure['atPeak'] {
  const mb = (n: number) => Math.round(n / MB);
  return { heapMb: mb(mu.heapTotal), externalMb: mb(mu.external), otherMb: mb(mu.rss - mu.heapTotal - mu.external) };
}

/** User+system CPU seconds of a process so far, from /proc/<pid>/stat; null where /proc is not there. */
export function procCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of stat)
    return ticks / CLOCK_TICKS;
  } catch {
    return null;
  }
}
/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

/** Peak (VmHWM) and current (VmRSS) resident set of a process, in MB; null where /proc is not there. */
export function procMemoryMb(pid: number): { peak: number; current: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { peak: kb('VmHWM') / 1024, current: kb('VmRSS') / 1024 };
  } catch {
    return null;
  }
}

/** Samples another process's RSS (VmRSS) every 50 ms: its VmHWM covers its whole life, not one phase. */
export function childRssSampler(pid: number): { stop(): number | null } {
  let peak: number | null = null;
  const sample = () => {
    const m = procMemoryMb(pid);
    if (m && (peak === null || m.current > peak)) peak = m.current;
  };
  sample();
  const timer = setInterval(sample, RSS_SAMPLE_MS);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
