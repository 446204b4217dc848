// `usage-pipeline report`: its flags, the run lock and the summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, printJson, underRunLock, type SetExit } from '../command.js';

export function registerReport(program: Command, setExit: SetExit): void {
  common(program.command('report'))
    .description('write the spend reports for a billing month as Parquet and Excel')
    .option('--month <YYYY-MM>', 'the billing month, e.g. 2026-10, or last (the previous month, UTC)')
    .option('--from <date>', 'start of a custom range (YYYY-MM-DD, UTC)')
    .option('--to <date>', 'end of a custom range, exclusive')
    .option(
      '--out <dir>',
      'output folder (default: report.out_dir; unset, reports/ beside store.db, or the state folder)',
    )
    .option('--format <list>', 'parquet,xlsx,html,focus,arrow (default report.formats)')
    .option('--prices <file>', 'price book (default report.prices)')
    .option('--require-complete', 'fail, writing nothing, when the period is not completely collected')
    .option('--finalize', 'record the month as finalised: later FOCUS exports add Correction rows instead of rewriting')
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const [{ reportCommand, prepareReportCommand }, { formatReportSummary, outputWidth }] = await Promise.all([
        import('../report.js'),
        import('../format.js'),
      ]);
      const prepared = prepareReportCommand(o);
      const r = await underRunLock(o, 'report', (signal) => reportCommand({ ...o, signal }, prepared));
      if (o.json) printJson(r);
      else process.stdout.write(formatReportSummary(r, outputWidth()) + '\n');
      setExit(r.exitCode);
    });
}
