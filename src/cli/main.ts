#!/usr/bin/env node
// The one entry point: parses the command line, calls a command function, prints, and owns process.exit.
// Exit codes (ARCHITECTURE.md): 0 complete; 2 finished with partial coverage; 1 failed; 64 bad command-line input;
// 130/143 stopped by SIGINT/SIGTERM.
// Start-up stays light: --help and --version load commander alone. Each command registers its flags
// from cli/commands/; DuckDB, exceljs, apache-arrow, the sandbox and the report writers are imported
// inside the commands that use them (through app/).
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { packageRoot } from '../config/packageRoot.js';
import { EXIT, Interrupted, printError, type SetExit } from './command.js';
import { registerCollect } from './commands/collect.js';
import { registerStatus } from './commands/status.js';
import { registerAlerts } from './commands/alerts.js';
import { registerQuery } from './commands/query.js';
import { registerReport } from './commands/report.js';
import { registerExport } from './commands/export.js';
import { registerPrune } from './commands/prune.js';
import { registerRestore } from './commands/restore.js';
import { registerCompact } from './commands/compact.js';
import { registerDemo } from './commands/demo.js';
import { registerSchedule } from './commands/schedule.js';
import { registerSandbox } from './commands/sandbox.js';

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

/** In the order the help lists them. */
const COMMANDS: ((program: Command, setExit: SetExit) => void)[] = [
  registerCollect,
  registerStatus,
  registerAlerts,
  registerQuery,
  registerReport,
  registerExport,
  registerPrune,
  registerRestore,
  registerCompact,
  registerDemo,
  registerSchedule,
  registerSandbox,
];

export function buildProgram(setExit: SetExit): Command {
  const program = new Command('usage-pipeline')
    .description('Collects consumption history into DuckDB and writes spend reports as Parquet and Excel.')
    .version(version(), '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    // One format per stream: off a terminal, commander's own complaints are JSON lines like every other.
    .configureOutput({
      writeErr: (str) =>
        process.stderr.write(
          process.stderr.isTTY
            ? str
            : JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: str.trim() }) + '\n',
        ),
    })
    .addHelpText('after', EXAMPLES)
    .exitOverride();

  for (const register of COMMANDS) register(program, setExit);

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
    if (code === EXIT.failed && process.env.USAGE_DEBUG && err instanceof Error && err.stack)
      process.stderr.write(err.stack + '\n');
    return code;
  }
}

/** Bad input (64) or a known failure (1). The error classes load only here, on the failure path. */
async function exitCodeFor(err: unknown): Promise<number> {
  const [{ UsageError }, { PriceBookError }, { ReportInputError }] = await Promise.all([
    import('../domain/errors.js'),
    import('../billing/pricebook.js'),
    import('../report/period.js'),
  ]);
  // PriceBookError's message already lists every problem: printed once.
  if (err instanceof UsageError || err instanceof PriceBookError || err instanceof ReportInputError) return EXIT.usage;
  return EXIT.failed;
}

// Pipes and files take stdout synchronously on POSIX, so exiting at once loses nothing; it also stops
// keep-alive sockets and timers from holding a finished command open.
process.exit(await main(process.argv));
