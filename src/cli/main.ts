#!/usr/bin/env node
// The one entry point: parses the command line, calls a command function, prints, and owns process.exit.
// Exit codes (DESIGN.md): 0 complete; 2 finished with partial coverage; 1 failed; 64 bad command-line input.
import { Command, CommanderError, Option } from 'commander';
import { UsageError } from '../config/load.js';
import { StoreLockedError, StoreMissingError } from '../store/store.js';
import { collectCommand, prepareCollect } from './collect.js';
import { terminalProgress } from './progress.js';
import { sandboxCommand } from './sandbox.js';
import { statusCommand, StatusNoDatabase } from './status.js';
import { formatCollectSummary, formatDemo, formatReportSummary, formatStatus } from './format.js';
import { prepareReport, reportCommand } from './report.js';
import { scheduleCommand } from './schedule.js';
import { commandContext, type CommonOptions } from './context.js';
import { RunLockBusyError, withRunLock } from '../schedule/lock.js';
import { CollectInterrupted } from '../collect/collect.js';
import { demoCommand } from './demo.js';
import { PriceBookError } from '../billing/pricebook.js';
import { ReportIncompleteError } from '../report/run.js';
import { ReportInputError } from '../report/period.js';

export const EXIT = { ok: 0, failed: 1, partial: 2, usage: 64 } as const;

function bigintSafe(_k: string, v: unknown) {
  return typeof v === 'bigint' ? v.toString() : v;
}

function printJson(v: unknown) {
  process.stdout.write(JSON.stringify(v, bigintSafe, 2) + '\n');
}

function common(cmd: Command): Command {
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
 * (lock, limiter, back-off, body): committed scopes stay, the lock is released, and the command exits
 * 130/143. Everything that can be refused is checked by the caller before this takes the lock.
 */
async function underRunLock<T>(o: CommonOptions, command: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctx = commandContext(o);
  const interrupt = new AbortController();
  let received: 'SIGINT' | 'SIGTERM' | undefined;
  const onSignal = (name: 'SIGINT' | 'SIGTERM') => () => {
    received ??= name;
    interrupt.abort(new Interrupted(name));
  };
  const onInt = onSignal('SIGINT');
  const onTerm = onSignal('SIGTERM');
  process.once('SIGINT', onInt);
  process.once('SIGTERM', onTerm);
  try {
    const out = await withRunLock(
      ctx.dbPath,
      { waitMs: ctx.config.store.lock_timeout_seconds * 1000, command, log: ctx.log, cwd: ctx.cwd, signal: interrupt.signal },
      (lock) => fn(AbortSignal.any([lock.signal, interrupt.signal])),
    );
    if (received) throw new Interrupted(received);
    return out;
  } catch (err) {
    if (received) throw new Interrupted(received);
    throw err;
  } finally {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  }
}

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('usage-pipeline')
    .description('Collects consumption history into DuckDB and writes spend reports as Parquet and Excel.')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  common(program.command('collect'))
    .description('collect consumption history (incremental unless --from/--to)')
    .option('--from <iso>', 'start of an explicit range (YYYY-MM-DD or ISO date-time, UTC)')
    .option('--to <iso>', 'end of an explicit range, exclusive')
    .option('--granularity <list>', 'hourly,daily,monthly (default from the config)')
    .option('--sources <list>', 'v1_programs,v2_programs,v2_frameworks (default from the config)')
    .option('--base-url <url>', 'API root including /v1 (or USAGE_BASE_URL)')
    .option('--orgs <ids>', 'organization ids, comma-separated (default: config, else all the key can see)')
    .option('--include-partial', 'also load the bucket still in progress')
    .option('--accept-deletions', 'commit answers that delete more than collect.max_deletion_share of a window')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .addOption(new Option('--inventory <when>', 'refresh programs/frameworks/snapshots').choices(['auto', 'always', 'never']).default('auto'))
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const prepared = prepareCollect(o);
      const progress = o.json ? undefined : terminalProgress();
      const result = await underRunLock(o, 'collect', (signal) =>
        collectCommand({ ...o, signal, ...(progress ? { progress } : {}) }, prepared),
      ).finally(() => progress?.stop());
      if (o.json) printJson(result);
      else process.stdout.write(formatCollectSummary(result, !!process.stdout.isTTY) + '\n');
      setExit(result.exitCode);
    });

  common(program.command('status'))
    .description('what is collected: coverage, freshness, last runs')
    .option('--json', 'print as JSON')
    .action(async (o) => {
      const s = await statusCommand(o);
      if (o.json) printJson(s);
      else process.stdout.write(formatStatus(s) + '\n');
      setExit(EXIT.ok);
    });

  common(program.command('report'))
    .description('write the spend reports for a billing month as Parquet and Excel')
    .option('--month <YYYY-MM>', 'the billing month, e.g. 2026-10')
    .option('--from <date>', 'start of a custom range (YYYY-MM-DD, UTC)')
    .option('--to <date>', 'end of a custom range, exclusive')
    .option('--out <dir>', 'output directory (default report.out_dir, "reports")')
    .option('--format <list>', 'parquet,xlsx,html,focus (default report.formats)')
    .option('--prices <file>', 'price book (default report.prices)')
    .option('--require-complete', 'fail, writing nothing, when the period is not completely collected')
    .option('--finalize', 'record the month as finalised: later FOCUS exports add Correction rows instead of rewriting')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const prepared = prepareReport(o);
      const r = await underRunLock(o, 'report', (signal) => reportCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(formatReportSummary(r) + '\n');
      setExit(r.exitCode);
    });

  common(program.command('demo'))
    .description('the demo behind `npm start`: sandbox, collect, last month\'s reports')
    .action(async (o) => {
      const progress = terminalProgress();
      const r = await underRunLock(o, 'demo', () => demoCommand({ ...o, ...(progress ? { progress } : {}) })).finally(() =>
        progress?.stop(),
      );
      process.stdout.write(formatDemo(r) + '\n');
      setExit(r.collect.exitCode === 1 ? EXIT.failed : EXIT.ok);
    });

  common(program.command('schedule'))
    .description('the long-running daemon: hourly and daily collection, the monthly export')
    .option('--base-url <url>', 'API root including /v1 (or USAGE_BASE_URL)')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .action(async (o) => {
      setExit((await scheduleCommand(o)).exitCode);
    });

  program
    .command('sandbox')
    .description('start the simulated management API on 127.0.0.1 (prints one JSON line when ready)')
    .option('--port <n>', 'port (0 = any free port)', '4010')
    .option('--seed <n>', 'data seed', '1')
    .option('--scenario <name>', 'small | large | bigint', 'small')
    .option('--now <iso>', 'start the clock at this instant')
    .option('--latency-ms <n>', 'added latency per request')
    .option('--fault-rate <p>', 'probability of an injected fault (503, 423, 429, dropped connection)')
    .option('--per-minute <n>', 'requests per rolling minute per key (default 700)')
    .action(async (o) => {
      const sb = await sandboxCommand(o);
      process.stdout.write(JSON.stringify({ base_url: sb.baseUrl, api_key: sb.apiKey }) + '\n');
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
      await sb.close();
      setExit(EXIT.ok);
    });

  return program;
}

export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram((c) => (code = c));
  try {
    if (argv.length <= 2) {
      program.outputHelp();
      return EXIT.usage;
    }
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version are "errors" to commander; everything else is bad input.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof Interrupted) {
      process.stderr.write(`usage-pipeline: ${err.message}\n`);
      return err.exitCode;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`usage-pipeline: ${err.message}\n`);
      return EXIT.usage;
    }
    if (err instanceof PriceBookError || err instanceof ReportInputError) {
      // A PriceBookError's message lists its problems already.
      process.stderr.write(`usage-pipeline: ${err.message}\n`);
      return EXIT.usage;
    }
    if (
      err instanceof StoreLockedError ||
      err instanceof StoreMissingError ||
      err instanceof RunLockBusyError ||
      err instanceof StatusNoDatabase ||
      err instanceof ReportIncompleteError ||
      err instanceof CollectInterrupted
    ) {
      process.stderr.write(`usage-pipeline: ${err.message}\n`);
      return EXIT.failed;
    }
    process.stderr.write(`usage-pipeline: ${err instanceof Error ? err.message : String(err)}\n`);
    if (process.env.USAGE_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    return EXIT.failed;
  }
}

// Pipes and files take stdout synchronously on POSIX, so exiting at once loses nothing; it also stops
// keep-alive sockets and timers from holding a finished command open.
process.exit(await main(process.argv));
