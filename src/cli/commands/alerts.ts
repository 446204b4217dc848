// `usage-pipeline alerts`: its flags, the run lock and the output (JSON lines off a terminal).
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, underRunLock, type SetExit } from '../command.js';

export function registerAlerts(program: Command, setExit: SetExit): void {
  common(program.command('alerts'))
    .description("evaluate budgets and anomalies not yet evaluated, and list the month's alerts")
    .option('--month <YYYY-MM>', 'the billing month (default: the current one, UTC)')
    .option('--json', 'one JSON line per alert (the default off a terminal)')
    .option('--check', 'for monitors: exit 1 while an alert of the current month is open and not acknowledged')
    .option('--ack <id>', 'acknowledge the alert with this id (al-...): --check no longer fails on it')
    .option('--note <text>', 'with --ack: why, e.g. "known: a load test"')
    .option('--by <name>', 'with --ack: who (default: the operating-system user)')
    .action(async (o) => {
      const cli = await import('../alerts.js');
      const prepared = cli.prepareAlertsCommand(o);
      const ack = o.ack as string | undefined;
      if (ack !== undefined) {
        const a = await underRunLock(o, 'alerts', (signal) => cli.alertsAckCommand({ ...o, ack, signal }));
        process.stdout.write((o.json ? cli.ackJson(a) : cli.formatAck(a)) + '\n');
        return setExit(EXIT.ok);
      }
      const r = await underRunLock(o, 'alerts', (signal) => cli.alertsCommand({ ...o, signal }, prepared));
      const out = o.check
        ? cli.checkLine(r)
        : o.json || !process.stdout.isTTY
          ? cli.alertsJsonLines(r)
          : cli.formatAlerts(r);
      if (out) process.stdout.write(out + '\n');
      setExit(o.check && r.openCurrent > 0 ? EXIT.failed : EXIT.ok);
    });
}
