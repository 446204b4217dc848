// `usage-pipeline compact`: its flags, the run lock and the summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, printJson, underRunLock, type SetExit } from '../command.js';

export function registerCompact(program: Command, setExit: SetExit): void {
  common(program.command('compact'))
    .description("rewrite the database in the store's current storage format, returning its free space")
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { compactCommand, prepareCompactCommand, formatCompact } = await import('../compact.js');
      prepareCompactCommand(o);
      const r = await underRunLock(o, 'compact', (signal) => compactCommand(o, signal));
      if (o.json) printJson(r);
      else process.stdout.write(formatCompact(r) + '\n');
      setExit(EXIT.ok);
    });
}
