// `usage-pipeline sandbox`: the simulated API on 127.0.0.1, until SIGTERM or SIGINT.
import { UsageError } from '../domain/errors.js';
import { parseIsoFlag } from '../collect/planner.js';
import { startSandbox, type Sandbox } from '../sandbox/server.js';

export interface SandboxCommandOptions {
  port?: string;
  seed?: string;
  scenario?: string;
  now?: string;
  latencyMs?: string;
  faultRate?: string;
  perMinute?: string;
  /** The clock stands still and each answer's bytes are replayed once rendered (sandbox/replay.ts). */
  replay?: boolean;
}

const SCENARIOS = ['small', 'medium', 'large', 'bigint'] as const;

function intFlag(flag: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} "${v}" must be a whole number from ${min} to ${max}.`);
  return n;
}

export async function sandboxCommand(opts: SandboxCommandOptions): Promise<Sandbox> {
  const scenario = opts.scenario ?? 'small';
  if (!(SCENARIOS as readonly string[]).includes(scenario)) {
    throw new UsageError(`--scenario "${scenario}" is unknown; choose one of ${SCENARIOS.join(', ')}.`);
  }
  const faultRate = opts.faultRate !== undefined ? Number(opts.faultRate) : undefined;
  if (faultRate !== undefined && (!Number.isFinite(faultRate) || faultRate < 0 || faultRate > 1)) {
    throw new UsageError(`--fault-rate "${opts.faultRate}" must be a probability from 0 to 1, e.g. 0.05.`);
  }
  const port = intFlag('--port', opts.port, 0, 65535);
  const seed = intFlag('--seed', opts.seed, 0, 2 ** 31 - 1);
  const latencyMs = intFlag('--latency-ms', opts.latencyMs, 0, 60_000);
  const perMinute = intFlag('--per-minute', opts.perMinute, 1, 1_000_000);
  const now = opts.now !== undefined ? parseIsoFlag('--now', opts.now) : undefined;
  return startSandbox({
    scenario: scenario as (typeof SCENARIOS)[number],
    ...(port !== undefined ? { port } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(latencyMs !== undefined ? { latencyMs } : {}),
    ...(faultRate !== undefined ? { faultRate } : {}),
    ...(now !== undefined ? { now } : {}),
    ...(perMinute !== undefined ? { limits: { perMinute } } : {}),
    ...(opts.replay ? { replay: true, advance: false } : {}),
  });
}
