// `usage-pipeline status`: its flags and output (or, with --check, one line and the exit code).
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, printJson, type SetExit } from '../command.js';

export function registerStatus(program: Command, setExit: SetExit): void {
  common(program.command('status'))
    .description('what is collected: coverage, freshness, last runs')
    .option('--json', 'print as JSON')
    .option(
      '--check',
      'for monitors: exit 1 when a scope is stale (status.max_age_hours) or the last run failed, with one line saying why',
    )
    .action(async (o) => {
      const [{ statusCommand }, { formatStatus, outputWidth }] = await Promise.all([
        import('../status.js'),
        import('../format.js'),
      ]);
      const s = await statusCommand(o);
      if (o.json) printJson(o.check ? { ok: s.check.ok, reason: s.check.reason, problems: s.check.problems } : s);
      else process.stdout.write((o.check ? s.check.reason : formatStatus(s, Date.now(), outputWidth())) + '\n');
      setExit(o.check && !s.check.ok ? EXIT.failed : EXIT.ok);
    });
}
