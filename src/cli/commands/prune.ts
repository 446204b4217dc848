// `usage-pipeline prune`: its flags, the run lock and the summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, printJson, underRunLock, type SetExit } from '../command.js';

export function registerPrune(program: Command, setExit: SetExit): void {
  common(program.command('prune'))
    .description('remove hourly usage older than [store.retention] hourly_days (daily and monthly are kept)')
    .option('--hourly-days <n>', 'keep this many UTC days of hourly usage (default: the config; at least 8)')
    .option('--dataset <dir>', 'remove only what this export --dataset folder holds (default: the config)')
    .option('--dry-run', 'say what would be removed, remove nothing')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { pruneCommand, preparePruneCommand, formatPrune } = await import('../prune.js');
      const prepared = preparePruneCommand(o);
      const r = await underRunLock(o, 'prune', (signal) => pruneCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(formatPrune(r) + '\n');
      setExit(EXIT.ok);
    });
}
