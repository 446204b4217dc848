// `usage-pipeline query`: its flags and output (a table, or JSON with integers exact).
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, type SetExit } from '../command.js';

export function registerQuery(program: Command, setExit: SetExit): void {
  common(program.command('query'))
    .description('run one read-only SQL query on the analyst copy and print a table (or JSON)')
    .argument('[sql]', 'the SQL statement, e.g. "SELECT count(*) FROM usage_program"')
    .option('--file <file>', 'read the statement from a file')
    .option('--example <name>', 'run a shipped example query, e.g. compute_hours_last_month')
    .option('--examples', 'list the shipped example queries')
    .option('--json', 'print the rows as JSON (integers exact)')
    .action(async (sql: string | undefined, o) => {
      const { queryCommand, formatQuery, formatExamples } = await import('../query.js');
      if (o.examples) {
        process.stdout.write(formatExamples() + '\n');
        return setExit(EXIT.ok);
      }
      const r = await queryCommand({ ...o, ...(sql !== undefined ? { sql } : {}) });
      if (o.json) {
        const { stringify } = await import('lossless-json');
        process.stdout.write(
          stringify(r.rows, (_k, v: unknown) => (v instanceof Date ? v.toISOString() : v), 2) + '\n',
        );
      } else process.stdout.write(formatQuery(r) + '\n');
      setExit(EXIT.ok);
    });
}
