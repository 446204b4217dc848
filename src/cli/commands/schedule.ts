// `usage-pipeline schedule`: its flags; the daemon runs until SIGTERM or SIGINT.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, type SetExit } from '../command.js';

export function registerSchedule(program: Command, setExit: SetExit): void {
  common(program.command('schedule'))
    .description('the long-running daemon: hourly and daily collection, the monthly export')
    .option('--base-url <url>', 'API root including /v1 (or USAGE_BASE_URL)')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .action(async (o) => {
      const { scheduleCommand } = await import('../schedule.js');
      setExit((await scheduleCommand(o)).exitCode);
    });
}
