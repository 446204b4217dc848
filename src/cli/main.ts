#!/usr/bin/env node
// The one entry point: parses the command line, calls a command function, prints, and owns process.exit.
// Exit codes (ARCHITECTURE.md): 0 complete; 2 finished with partial coverage; 1 failed; 64 bad command-line input;
// 130/143 stopped by SIGINT/SIGTERM.
// Start-up stays light: --help and --version load commander alone. DuckDB, exceljs, apache-arrow, the
// sandbox and the report writers are imported inside the commands that use them (through app/).
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import type { CommonOptions } from '../app/context.js';
import { packageRoot } from '../config/packageRoot.js';

export const EXIT = { ok: 0, failed: 1, partial: 2, usage: 64 } as const;

function bigintSafe(_k: string, v: unknown) {
  return typeof v === 'bigint' ? v.toString() : v;
}

function printJson(v: unknown) {
  process.stdout.write(JSON.stringify(v, bigintSafe, 2) + '\n');
}

function version(): string {
  return (JSON.parse(readFileSync(`${packageRoot()}/package.json`, 'utf8')) as { version: string }).version;
}

const EXAMPLES = `
Examples:
  $ usage-pipeline sandbox --port 4010 &    # the simulated API; prints its key
  $ USAGE_API_KEY=... USAGE_BASE_URL=https://.../v1 usage-pipeline collect
  $ usage-pipeline report --month last      # into report.out_dir/YYYY-MM/
  $ usage-pipeline export --dataset DIR     # Hive-partitioned Parquet
  $ usage-pipeline status                   # coverage, freshness, last runs
  $ usage-pipeline prune --dry-run          # retention: what prune removes
  $ usage-pipeline status --check           # exit 1: stale, or last run failed
  $ usage-pipeline alerts --check           # exit 1: an alert open this month
  $ usage-pipeline query --examples         # the example queries shipped
  $ usage-pipeline schedule                 # the daemon (systemd or a terminal)

Config: --config, else USAGE_CONFIG, ./config/usage.toml,
$XDG_CONFIG_HOME/usage-pipeline/usage.toml, /etc/usage-pipeline/usage.toml.
Exit codes: 0 complete, 2 partial coverage, 1 failed, 64 bad input,
130/143 stopped by SIGINT/SIGTERM.`;

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
 * (lock, limiter, back-off, body): no new request, committed work stays, the lock is released and the
 * command exits 130/143. A second signal exits at once (the lock is released first). Everything that can
 * be refused is checked by the caller before this takes the lock.
 */
async function underRunLock<T>(o: CommonOptions, command: string, fn: (signal: AbortSignal, lock: { dbPath: string }) => Promise<T>): Promise<T> {
  const [{ commandContext }, { withRunLock, releaseAllHeldLocks }, { withRunMetrics }] = await Promise.all([
    import('../app/context.js'), import('../app/lock.js'), import('../app/metrics.js'),
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
      { waitMs: ctx.config.store.lock_timeout_seconds * 1000, command, log: ctx.log, cwd: ctx.cwd, signal: interrupt.signal },
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

export function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('usage-pipeline')
    .description('Collects consumption history into DuckDB and writes spend reports as Parquet and Excel.')
    .version(version(), '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // One format per stream: off a terminal, commander's own complaints are JSON lines like every other.
    .configureOutput({
      writeErr: (str) =>
        process.stderr.write(process.stderr.isTTY ? str : JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: str.trim() }) + '\n'),
    })
    .addHelpText('after', EXAMPLES)
    .exitOverride();

  common(program.command('collect'))
    .description('collect consumption history (incremental unless --from/--to)')
    .option('--from <iso>', 'start of an explicit range (YYYY-MM-DD or ISO date-time, UTC)')
    .option('--to <iso>', 'end of an explicit range, exclusive')
    .option('--granularity <list>', 'hourly,daily,monthly (default from the config)')
    .option('--sources <list>', 'v1_programs,v2_programs,v2_frameworks (default from the config)')
    .option('--base-url <url>', 'API root including /v1 (default: USAGE_BASE_URL, else api.base_url; required)')
    .option('--orgs <ids>', 'organization ids, comma-separated (default: config, else all the key can see)')
    .option('--include-partial', 'also load the bucket still in progress')
    .option('--accept-deletions', 'commit answers that delete more than collect.max_deletion_share of a window')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .addOption(new Option('--inventory <when>', 'refresh programs/frameworks/snapshots').choices(['auto', 'always', 'never']).default('auto'))
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const [{ collectCommand, prepareCollectCommand }, { collectProgress, runSummary }, { formatCollectSummary, outputWidth }] = await Promise.all([
        import('./collect.js'), import('./progress.js'), import('./format.js'),
      ]);
      // Flags, URL, key and folders are refused (exit 64) before the lock, a folder or a request.
      const prepared = prepareCollectCommand(o);
      const progress = collectProgress({ json: !!o.json });
      const result = await underRunLock(o, 'collect', (signal, lock) => {
        progress.startFile(lock.dbPath);
        return collectCommand({ ...o, signal, progress }, prepared);
      }).finally(() => progress.stop());
      const by = (result as { interruptedBy?: 'SIGINT' | 'SIGTERM' }).interruptedBy;
      if (by) printError(new Interrupted(by).message, new Interrupted(by).exitCode);
      // One format per stream: off a terminal stderr carries JSON lines only, ending with the run's summary.
      if (!process.stderr.isTTY) process.stderr.write(JSON.stringify(runSummary(result), bigintSafe) + '\n');
      if (o.json) printJson(result);
      else if (process.stdout.isTTY) process.stdout.write(formatCollectSummary(result, true, outputWidth()) + '\n');
      setExit(by ? new Interrupted(by).exitCode : result.exitCode);
    });

  common(program.command('status'))
    .description('what is collected: coverage, freshness, last runs')
    .option('--json', 'print as JSON')
    .option('--check', 'for monitors: exit 1 when a scope is stale (status.max_age_hours) or the last run failed, with one line saying why')
    .action(async (o) => {
      const [{ statusCommand }, { formatStatus, outputWidth }] = await Promise.all([import('./status.js'), import('./format.js')]);
      const s = await statusCommand(o);
      if (o.json) printJson(o.check ? { ok: s.check.ok, reason: s.check.reason, problems: s.check.problems } : s);
      else process.stdout.write((o.check ? s.check.reason : formatStatus(s, Date.now(), outputWidth())) + '\n');
      setExit(o.check && !s.check.ok ? EXIT.failed : EXIT.ok);
    });

  common(program.command('alerts'))
    .description('evaluate budgets and anomalies not yet evaluated, and list the month\'s alerts')
    .option('--month <YYYY-MM>', 'the billing month (default: the current one, UTC)')
    .option('--json', 'one JSON line per alert (the default off a terminal)')
    .option('--check', 'for monitors: exit 1 while an alert of the current month is open and not acknowledged')
    .option('--ack <id>', 'acknowledge the alert with this id (al-...): --check no longer fails on it')
    .option('--note <text>', 'with --ack: why, e.g. "known: a load test"')
    .option('--by <name>', 'with --ack: who (default: the operating-system user)')
    .action(async (o) => {
      const { ackJson, alertsAckCommand, alertsCommand, alertsJsonLines, checkLine, formatAck, formatAlerts, prepareAlertsCommand } = await import('./alerts.js');
      const prepared = prepareAlertsCommand(o);
      const ack = o.ack as string | undefined;
      if (ack !== undefined) {
        const a = await underRunLock(o, 'alerts', (signal) => alertsAckCommand({ ...o, ack, signal }));
        process.stdout.write((o.json ? ackJson(a) : formatAck(a)) + '\n');
        return setExit(EXIT.ok);
      }
      const r = await underRunLock(o, 'alerts', (signal) => alertsCommand({ ...o, signal }, prepared));
      const out = o.check ? checkLine(r) : o.json || !process.stdout.isTTY ? alertsJsonLines(r) : formatAlerts(r);
      if (out) process.stdout.write(out + '\n');
      setExit(o.check && r.openCurrent > 0 ? EXIT.failed : EXIT.ok);
    });

  common(program.command('query'))
    .description('run one read-only SQL query on the analyst copy and print a table (or JSON)')
    .argument('[sql]', 'the SQL statement, e.g. "SELECT count(*) FROM usage_program"')
    .option('--file <file>', 'read the statement from a file')
    .option('--example <name>', 'run a shipped example query, e.g. compute_hours_last_month')
    .option('--examples', 'list the shipped example queries')
    .option('--json', 'print the rows as JSON (integers exact)')
    .action(async (sql: string | undefined, o) => {
      const { queryCommand, formatQuery, formatExamples } = await import('./query.js');
      if (o.examples) {
        process.stdout.write(formatExamples() + '\n');
        return setExit(EXIT.ok);
      }
      const r = await queryCommand({ ...o, ...(sql !== undefined ? { sql } : {}) });
      if (o.json) {
        const { stringify } = await import('lossless-json');
        process.stdout.write(stringify(r.rows, (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v), 2) + '\n');
      } else process.stdout.write(formatQuery(r) + '\n');
      setExit(EXIT.ok);
    });

  common(program.command('report'))
    .description('write the spend reports for a billing month as Parquet and Excel')
    .option('--month <YYYY-MM>', 'the billing month, e.g. 2026-10, or last (the previous month, UTC)')
    .option('--from <date>', 'start of a custom range (YYYY-MM-DD, UTC)')
    .option('--to <date>', 'end of a custom range, exclusive')
    .option('--out <dir>', 'output folder (default: report.out_dir; unset, reports/ beside store.db, or the state folder)')
    .option('--format <list>', 'parquet,xlsx,html,focus,arrow (default report.formats)')
    .option('--prices <file>', 'price book (default report.prices)')
    .option('--require-complete', 'fail, writing nothing, when the period is not completely collected')
    .option('--finalize', 'record the month as finalised: later FOCUS exports add Correction rows instead of rewriting')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const [{ reportCommand, prepareReportCommand }, { formatReportSummary, outputWidth }] = await Promise.all([import('./report.js'), import('./format.js')]);
      const prepared = prepareReportCommand(o);
      const r = await underRunLock(o, 'report', (signal) => reportCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(formatReportSummary(r, outputWidth()) + '\n');
      setExit(r.exitCode);
    });

  common(program.command('export'))
    .description('write the collected usage, dimensions and priced daily lines as a Hive-partitioned Parquet dataset')
    .option('--dataset <dir>', 'dataset root: a folder, a mounted bucket, or a folder you sync (default: export.dataset)')
    .option('--format <list>', 'parquet,arrow (default parquet; arrow adds Arrow IPC copies under DIR/_arrow)')
    .option('--prices <file>', 'price book (default report.prices)')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { exportCommand, prepareExportCommand } = await import('./export.js');
      const prepared = prepareExportCommand(o);
      const r = await underRunLock(o, 'export', (signal) => exportCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(`dataset ${r.dir}: ${r.partitions} partitions, ${r.written.length} written, ${r.unchanged} unchanged, ${r.removed.length} removed, ${r.rows} rows\n`);
      setExit(EXIT.ok);
    });

  common(program.command('prune'))
    .description('remove hourly usage older than [store.retention] hourly_days (daily and monthly are kept)')
    .option('--hourly-days <n>', 'keep this many UTC days of hourly usage (default: the config; at least 8)')
    .option('--dataset <dir>', 'remove only what this export --dataset folder holds (default: the config)')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { pruneCommand, preparePruneCommand, formatPrune } = await import('./prune.js');
      const prepared = preparePruneCommand(o);
      const r = await underRunLock(o, 'prune', (signal) => pruneCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(formatPrune(r) + '\n');
      setExit(EXIT.ok);
    });

  common(program.command('demo'))
    .description('the demo behind `npm start`: sandbox, collect, last month\'s reports')
    .action(async (o) => {
      const [{ demoCommand }, { terminalProgress }, { formatDemo, outputWidth }] = await Promise.all([import('./demo.js'), import('./progress.js'), import('./format.js')]);
      const progress = terminalProgress();
      const r = await underRunLock(o, 'demo', () => demoCommand({ ...o, ...(progress ? { progress } : {}) })).finally(() =>
        progress?.stop(),
      );
      process.stdout.write(formatDemo(r, outputWidth()) + '\n');
      setExit(r.collect.exitCode === 1 ? EXIT.failed : EXIT.ok);
    });

  common(program.command('schedule'))
    .description('the long-running daemon: hourly and daily collection, the monthly export')
    .option('--base-url <url>', 'API root including /v1 (or USAGE_BASE_URL)')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .action(async (o) => {
      const { scheduleCommand } = await import('./schedule.js');
      setExit((await scheduleCommand(o)).exitCode);
    });

  program
    .command('sandbox')
    .description('start the simulated management API on 127.0.0.1 (prints one JSON line when ready)')
    .option('--port <n>', 'port (0 = any free port)', '4010')
    .option('--seed <n>', 'data seed', '1')
    .option('--scenario <name>', 'small | medium | large | bigint', 'small')
    .option('--now <iso>', 'start the clock at this instant')
    .option('--latency-ms <n>', 'added latency per request')
    .option('--fault-rate <p>', 'probability of an injected fault (503, 423, 429, dropped connection)')
    .option('--per-minute <n>', 'requests per rolling minute per key (default 700)')
    .action(async (o) => {
      const { sandboxCommand } = await import('./sandbox.js');
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
    const code = err instanceof Interrupted ? err.exitCode : await exitCodeFor(err);
    printError(err instanceof Error ? err.message : String(err), code);
    if (code === EXIT.failed && process.env.USAGE_DEBUG && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
    return code;
  }
}

/** One error line on stderr: plain on a terminal, else JSON, so `>> log 2>&1` stays parseable. */
function printError(message: string, code: number): void {
  if (process.stderr.isTTY) process.stderr.write(`usage-pipeline: ${message}\n`);
  else process.stderr.write(JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: message, exit_code: code }) + '\n');
}

/** Bad input (64) or a known failure (1). The error classes load only here, on the failure path. */
async function exitCodeFor(err: unknown): Promise<number> {
  const [{ UsageError }, { PriceBookError }, { ReportInputError }] = await Promise.all([
    import('../domain/errors.js'), import('../billing/pricebook.js'), import('../report/period.js'),
  ]);
  // PriceBookError's message already lists every problem: printed once.
  if (err instanceof UsageError || err instanceof PriceBookError || err instanceof ReportInputError) return EXIT.usage;
  return EXIT.failed;
}

// Pipes and files take stdout synchronously on POSIX, so exiting at once loses nothing; it also stops
// keep-alive sockets and timers from holding a finished command open.
process.exit(await main(process.argv));
