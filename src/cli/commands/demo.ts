// `usage-pipeline demo` (npm start): the progress display, the run lock and what to try next.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { common, EXIT, underRunLock, type SetExit } from '../command.js';

export function registerDemo(program: Command, setExit: SetExit): void {
  common(program.command('demo'))
    .description("the demo behind `npm start`: sandbox, collect, last month's reports")
    .action(async (o) => {
      const [{ demoCommand }, { terminalProgress }, { formatDemo, outputWidth }] = await Promise.all([
        import('../demo.js'),
        import('../progress.js'),
        import('../format.js'),
      ]);
      const progress = terminalProgress();
      const r = await underRunLock(o, 'demo', () => demoCommand({ ...o, ...(progress ? { progress } : {}) })).finally(
        () => progress?.stop(),
      );
      process.stdout.write(formatDemo(r, outputWidth()) + '\n');
      setExit(r.collect.exitCode === 1 ? EXIT.failed : EXIT.ok);
    });
}
