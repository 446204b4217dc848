// `usage-pipeline collect`: its flags, the progress display, the run lock and the summary.
// Registered at start-up with commander alone; the command's own modules load when it runs.
import { Option, type Command } from 'commander';
import { bigintSafe, common, Interrupted, printError, printJson, underRunLock, type SetExit } from '../command.js';

export function registerCollect(program: Command, setExit: SetExit): void {
  common(program.command('collect'))
    .description('collect consumption history (incremental unless --from/--to)')
    .option('--from <iso>', 'start of an explicit range (YYYY-MM-DD or ISO date-time, UTC)')
    .option('--to <iso>', 'end of an explicit range, exclusive')
    .option('--granularity <list>', 'hourly,daily,monthly (default from the config)')
    .option('--sources <list>', 'v1_programs,v2_programs,v2_frameworks (default from the config)')
    .option('--base-url <url>', 'API root including /v1 (default: USAGE_BASE_URL, else api.base_url; required)')
    .option('--orgs <ids>', 'organization ids, comma-separated (default: config, else all the key can see)')
    .option('--include-partial', 'also load the bucket still in progress')
    .option('--accept-deletions', 'commit answers that delete more than collect.max_deletion_share of a window')
    .option('--insecure-http', 'allow a plain-http --base-url beyond loopback (the key then travels in clear text)')
    .addOption(
      new Option('--inventory <when>', 'refresh programs/frameworks/snapshots')
        .choices(['auto', 'always', 'never'])
        .default('auto'),
    )
    .option('--json', 'print the result as JSON')
    .action(async (o) => {
      const [
        { collectCommand, prepareCollectCommand },
        { collectProgress, runSummary },
        { formatCollectSummary, outputWidth },
      ] = await Promise.all([import('../collect.js'), import('../progress.js'), import('../format.js')]);
      // Flags, URL, key and folders are refused (exit 64) before the lock, a folder or a request.
      const prepared = prepareCollectCommand(o);
      const progress = collectProgress({ json: !!o.json });
      const result = await underRunLock(o, 'collect', (signal, lock) => {
        progress.startFile(lock.dbPath);
        return collectCommand({ ...o, signal, progress }, prepared);
      }).finally(() => progress.stop());
      const by = (result as { interruptedBy?: 'SIGINT' | 'SIGTERM' }).interruptedBy;
      if (by) printError(new Interrupted(by).message, new Interrupted(by).exitCode);
      // One format per stream: off a terminal stderr carries JSON lines only, ending with the run's summary.
      if (!process.stderr.isTTY) process.stderr.write(JSON.stringify(runSummary(result), bigintSafe) + '\n');
      if (o.json) printJson(result);
      else if (process.stdout.isTTY) process.stdout.write(formatCollectSummary(result, true, outputWidth()) + '\n');
      setExit(by ? new Interrupted(by).exitCode : result.exitCode);
    });
}
