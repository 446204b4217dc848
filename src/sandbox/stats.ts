// Counters the sandbox keeps of what it served: tests and benchmarks read them through
// GET /__sandbox/stats to prove a client stayed within the limits.

export interface SandboxStats {
  total: number;
  byRoute: Record<string, number>;
  byStatus: Record<string, number>;
  violations: { perMinute: number; perSecond: number; total: number };
  faults: { '503': number; '423': number; '429': number; drop: number; latency: number };
  /** Bytes of the bodies of the answers counted in byStatus (what a collector received). */
  bytesSent: number;
  /** Requests refused with 429 by the limits (injected 429 faults are counted under faults). */
  throttledByLimit: number;
  /** The request log in short: per route, the sequence numbers (1 = first request served) of its first
   *  and last request, so a test can prove one kind of request all came before another. */
  firstSeq: Record<string, number>;
  lastSeq: Record<string, number>;
  /** Only in replay mode (replay.ts): answers served from stored bytes, answers rendered, bytes stored. */
  replay?: { hits: number; misses: number; storedBytes: number };
}

export function emptyStats(): SandboxStats {
  return {
    total: 0,
    byRoute: {},
    byStatus: {},
    violations: { perMinute: 0, perSecond: 0, total: 0 },
    faults: { '503': 0, '423': 0, '429': 0, drop: 0, latency: 0 },
    bytesSent: 0,
    throttledByLimit: 0,
    firstSeq: {},
    lastSeq: {},
  };
}

export function copyStats(s: SandboxStats): SandboxStats {
  return structuredClone(s);
}
