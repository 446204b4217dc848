// `usage-pipeline export`: its flags, the run lock and the one-line summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, printJson, underRunLock, type SetExit } from '../command.js';

export function registerExport(program: Command, setExit: SetExit): void {
  common(program.command('export'))
    .description('write the collected usage, dimensions and priced daily lines as a Hive-partitioned Parquet dataset')
    .option(
      '--dataset <dir>',
      'dataset root: a folder, a mounted bucket, or a folder you sync (default: export.dataset)',
    )
    .option('--format <list>', 'parquet,arrow (default parquet; arrow adds Arrow IPC copies under DIR/_arrow)')
    .option('--prices <file>', 'price book (default report.prices)')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const { exportCommand, prepareExportCommand } = await import('../export.js');
      const prepared = prepareExportCommand(o);
      const r = await underRunLock(o, 'export', (signal) => exportCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else
        process.stdout.write(
          `dataset ${r.dir}: ${r.partitions} partitions, ${r.written.length} written, ${r.unchanged} unchanged, ${r.removed.length} removed, ${r.rows} rows\n`,
        );
      setExit(EXIT.ok);
    });
}
