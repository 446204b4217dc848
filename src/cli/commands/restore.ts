// `usage-pipeline restore`: its flags, the run lock and the summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, printJson, underRunLock, type SetExit } from '../command.js';

export function registerRestore(program: Command, setExit: SetExit): void {
  common(program.command('restore'))
    .description('rebuild a damaged database (moved aside first) from the analyst copy')
    .option('--from <copy>', 'the analyst copy to restore from (default: the one beside the database)')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { restoreCommand, prepareRestoreCommand, formatRestore } = await import('../restore.js');
      prepareRestoreCommand(o);
      const r = await underRunLock(o, 'restore', () => restoreCommand(o));
      if (o.json) printJson(r);
      else process.stdout.write(formatRestore(r) + '\n');
      setExit(EXIT.ok);
    });
}
