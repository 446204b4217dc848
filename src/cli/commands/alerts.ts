// `usage-pipeline alerts`: its flags, the run lock and the output (JSON lines off a terminal).
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, underRunLock, type SetExit } from '../command.js';

export function registerAlerts(program: Command, setExit: SetExit): void {
  common(program.command('alerts'))
    .description("evaluate budgets and anomalies not yet evaluated, and list the month's alerts")
    .option('--month <YYYY-MM>', 'the billing month (default: the current one, UTC)')
    .option('--json', 'one JSON line per alert (the default off a terminal)')
    .option('--check', 'for monitors: exit 1 while an alert of the current month is open')
    .action(async (o) => {
      const { alertsCommand, alertsJsonLines, checkLine, formatAlerts, prepareAlertsCommand } =
        await import('../alerts.js');
      const prepared = prepareAlertsCommand(o);
      const r = await underRunLock(o, 'alerts', (signal) => alertsCommand({ ...o, signal }, prepared));
      const out = o.check ? checkLine(r) : o.json || !process.stdout.isTTY ? alertsJsonLines(r) : formatAlerts(r);
      if (out) process.stdout.write(out + '\n');
      setExit(o.check && r.openCurrent > 0 ? EXIT.failed : EXIT.ok);
    });
}
