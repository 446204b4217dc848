// The sandbox in its own process (the built CLI), so that its CPU and memory are not the collector's:
// started, read for its ready line, asked for its counters, and stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SandboxStats } from '../src/sandbox/stats.js';

export interface SandboxProcess {
  baseUrl: string;
  apiKey: string;
  pid: number;
  stats(): Promise<SandboxStats>;
  resetStats(): Promise<void>;
  /** Latency and rate limits from now on (the benchmark's set-up runs unthrottled, its measurements not). */
  setPace(pace: { latency_ms?: number; per_minute?: number; per_second_per_route?: number }): Promise<void>;
  setClock(iso: string): Promise<void>;
  /** Empties the replay's stored answers (a sandbox started with `replay`). */
  clearReplay(): Promise<void>;
  stop(): Promise<void>;
}

/** The built CLI beside this compiled file: dist/bench/ -> dist/src/cli/main.js. */
export const CLI_PATH = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

const READY_TIMEOUT_MS = 120_000;

/** The sandbox's first line on stdout: where it listens and its API key; fails when it exits or is silent. */
function readyLine(child: ChildProcess): Promise<{ base_url: string; api_key: string }> {
  return new Promise<{ base_url: string; api_key: string }>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the sandbox did not print its ready line within ${READY_TIMEOUT_MS / 1000} s`)),
      READY_TIMEOUT_MS,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', (line) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(line) as { base_url: string; api_key: string });
      } catch {
        reject(new Error(`unexpected first line from the sandbox: ${line}`));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the sandbox exited (code ${code}) before it was ready`));
    });
  });
}

export async function startSandboxProcess(opts: {
  scenario: string;
  latencyMs: number;
  now: string;
  /** `sandbox --replay`: the clock stands still and each page is rendered once, then served from its bytes. */
  replay?: boolean;
  nodeArgs?: string[];
}): Promise<SandboxProcess> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(opts.nodeArgs ?? []),
      CLI_PATH,
      'sandbox',
      '--port',
      '0',
      '--scenario',
      opts.scenario,
      '--latency-ms',
      String(opts.latencyMs),
      '--now',
      opts.now,
      ...(opts.replay ? ['--replay'] : []),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = await readyLine(child);
  const control = ready.base_url.replace(/\/v1\/?$/, '') + '/__sandbox/';
  // A pooled keep-alive connection the server has just closed fails once: ask again on a new one.
  const call = async (path: string, method: 'GET' | 'POST', body?: unknown): Promise<unknown> => {
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(control + path, {
          method,
          headers: { connection: 'close' },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      } catch (err) {
        if (attempt >= 2 || child.exitCode !== null)
          throw new Error(`sandbox control ${path} failed (sandbox exit code ${child.exitCode})`, { cause: err });
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      if (!res.ok) throw new Error(`sandbox control ${path} answered ${res.status}: ${await res.text()}`);
      return await res.json();
    }
  };
  return {
    baseUrl: ready.base_url,
    apiKey: ready.api_key,
    pid: child.pid as number,
    stats: async () => (await call('stats', 'GET')) as SandboxStats,
    resetStats: async () => {
      await call('reset-stats', 'POST');
    },
    setPace: async (pace) => {
      await call('pace', 'POST', pace);
    },
    setClock: async (iso) => {
      await call('clock', 'POST', { now: iso });
    },
    clearReplay: async () => {
      await call('replay/clear', 'POST');
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
