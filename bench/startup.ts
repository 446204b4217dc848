// Start-up of the command line: `usage-pipeline --help` and `--version` should answer like a CLI
// (goal: under 0.3 s and 80 MB RSS), which holds only while DuckDB, exceljs, the sandbox and the report
// writers load inside the commands that use them. Median of several runs of the built binary.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { median } from './measure.js';

export const STARTUP_GOALS = { ms: 300, rssMb: 80 } as const;

export interface StartupResult {
  cli_help_ms: number;
  cli_help_rss_mb: number;
  cli_version_ms: number;
  cli_version_rss_mb: number;
  runs: number;
}

/** The child's peak RSS (VmHWM, a high-water mark) as last seen in /proc before it exits; null if unreadable. */
function highWaterMb(pid: number): number | null {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

async function once(bin: string, arg: string): Promise<{ ms: number; rssMb: number }> {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [bin, arg], { stdio: ['ignore', 'ignore', 'inherit'] });
  const exited = new Promise<number | null>((r) => child.once('exit', r));
  let peak = 0;
  let done = false;
  void exited.then(() => (done = true));
  // Poll the high-water mark until the process is gone (a zombie's status has no VmHWM line).
  while (!done) {
    const mb = highWaterMb(child.pid!);
    if (mb === null) break;
    peak = Math.max(peak, mb);
    await new Promise((r) => setTimeout(r, 2)); // VmHWM only grows: a late read is the peak
  }
  const code = await exited;
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (code !== 0) throw new Error(`${bin} ${arg} exited with ${code}`);
  return { ms, rssMb: peak };
}

export async function measureStartup(root: string, runs = 7): Promise<StartupResult> {
  const bin = join(root, 'dist', 'src', 'cli', 'main.js');
  const of = async (arg: string) => {
    const xs: { ms: number; rssMb: number }[] = [];
    await once(bin, arg); // warm the file cache
    for (let i = 0; i < runs; i++) xs.push(await once(bin, arg));
    return { ms: Math.round(median(xs.map((x) => x.ms))), rssMb: Math.round(median(xs.map((x) => x.rssMb))) };
  };
  const help = await of('--help');
  const version = await of('--version');
  return {
    cli_help_ms: help.ms,
    cli_help_rss_mb: help.rssMb,
    cli_version_ms: version.ms,
    cli_version_rss_mb: version.rssMb,
    runs,
  };
}

export function startupLine(s: StartupResult): string {
  const ok = (ms: number, mb: number) => (ms < STARTUP_GOALS.ms && mb < STARTUP_GOALS.rssMb ? 'met' : 'MISSED');
  return (
    `start-up (median of ${s.runs}, goal < ${STARTUP_GOALS.ms} ms and < ${STARTUP_GOALS.rssMb} MB): ` +
    `--help ${s.cli_help_ms} ms ${s.cli_help_rss_mb} MB (${ok(s.cli_help_ms, s.cli_help_rss_mb)}), ` +
    `--version ${s.cli_version_ms} ms ${s.cli_version_rss_mb} MB (${ok(s.cli_version_ms, s.cli_version_rss_mb)})`
  );
}
