// What every command's registration shares: the exit codes, the common flags, JSON output, the one
// error line, and the run lock with its signal handling. Light on purpose: main.ts loads it at start-up,
// so it imports commander alone; the app/ modules load inside underRunLock, when a command runs.
import type { Command } from 'commander';
import type { CommonOptions } from '../app/context.js';

/** How a command's action sets the process's exit code (main() returns it). */
export type SetExit = (code: number) => void;

export const EXIT = { ok: 0, failed: 1, partial: 2, usage: 64 } as const;

export function bigintSafe(_k: string, v: unknown) {
  return typeof v === 'bigint' ? v.toString() : v;
}

export function printJson(v: unknown) {
  process.stdout.write(JSON.stringify(v, bigintSafe, 2) + '\n');
}

export function common(cmd: Command): Command {
  return cmd
    .option('--config <file>', 'configuration file', undefined)
    .option('--db <file>', 'DuckDB file (default: store.db from the config, or USAGE_DB)');
}

/** The first SIGINT or SIGTERM stopped the command: it exits 130 or 143 (128 + the signal's number). */
export class Interrupted extends Error {
  constructor(readonly signalName: 'SIGINT' | 'SIGTERM') {
    super(`stopped by ${signalName}; what was committed before is kept, the scope in progress was rolled back`);
  }
  get exitCode(): number {
    return this.signalName === 'SIGINT' ? 130 : 143;
  }
}

/**
 * Runs a command that writes the database under the one cross-process run lock (shared with the
 * daemon), waiting up to store.lock_timeout_seconds for it. The first SIGINT/SIGTERM ends every wait
 * (lock, limiter, back-off, body): no new request, committed work stays, the lock is released and the
 * command exits 130/143. A second signal exits at once (the lock is released first). Everything that can
 * be refused is checked by the caller before this takes the lock.
 */
export async function underRunLock<T>(
  o: CommonOptions,
  command: string,
  fn: (signal: AbortSignal, lock: { dbPath: string }) => Promise<T>,
): Promise<T> {
  const [{ commandContext }, { withRunLock, releaseAllHeldLocks }, { withRunMetrics }] = await Promise.all([
    import('../app/context.js'),
    import('../app/lock.js'),
    import('../app/metrics.js'),
  ]);
  const ctx = commandContext(o);
  const interrupt = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    if (received) {
      releaseAllHeldLocks();
      process.exit(name === 'SIGINT' ? 130 : 143);
    }
    received = name;
    ctx.log.warn('stopping: no new request; committed work is kept (a second signal exits at once)', { signal: name });
    interrupt.abort(new Interrupted(name));
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  try {
    const out = await withRunLock(
      ctx.dbPath,
      {
        waitMs: ctx.config.store.lock_timeout_seconds * 1000,
        command,
        log: ctx.log,
        cwd: ctx.cwd,
        signal: interrupt.signal,
      },
      (lock) => {
        const signal = AbortSignal.any([lock.signal, interrupt.signal]);
        // Every run's outcome goes to the metrics textfile, if one is configured (the demo's is not a run).
        return command === 'demo' ? fn(signal, lock) : withRunMetrics(ctx, command, signal, () => fn(signal, lock));
      },
    );
    if (received && command !== 'collect') throw new Interrupted(received);
    if (received) return Object.assign(out as object, { interruptedBy: received }) as T;
    return out;
  } catch (err) {
    if (received) throw new Interrupted(received);
    throw err;
  }
  // The handlers stay until the process exits: a signal after the lock is released still means "stopped".
}

export /** One error line on stderr: plain on a terminal, else JSON, so `>> log 2>&1` stays parseable. */
function printError(message: string, code: number): void {
  if (process.stderr.isTTY) process.stderr.write(`usage-pipeline: ${message}\n`);
  else
    process.stderr.write(
      JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: message, exit_code: code }) + '\n',
    );
}
