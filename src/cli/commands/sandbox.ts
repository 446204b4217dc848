// `usage-pipeline sandbox`: its flags; the simulated API runs until SIGTERM or SIGINT.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import type { Command } from 'commander';
import { EXIT, type SetExit } from '../command.js';

export function registerSandbox(program: Command, setExit: SetExit): void {
  program
    .command('sandbox')
    .description('start the simulated management API on 127.0.0.1 (prints one JSON line when ready)')
    .option('--port <n>', 'port (0 = any free port)', '4010')
    .option('--seed <n>', 'data seed', '1')
    .option('--scenario <name>', 'small | medium | large | bigint', 'small')
    .option('--now <iso>', 'start the clock at this instant')
    .option('--latency-ms <n>', 'added latency per request')
    .option('--fault-rate <p>', 'probability of an injected fault (503, 423, 429, dropped connection)')
    .option('--per-minute <n>', 'requests per rolling minute per key (default 700)')
    .option(
      '--replay',
      'the clock stands still (moved only by POST /__sandbox/clock); each answer rendered once, then replayed',
    )
    .action(async (o) => {
      const { sandboxCommand } = await import('../sandbox.js');
      const sb = await sandboxCommand(o);
      process.stdout.write(JSON.stringify({ base_url: sb.baseUrl, api_key: sb.apiKey }) + '\n');
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
      await sb.close();
      setExit(EXIT.ok);
    });
}
