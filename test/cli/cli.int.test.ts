// The command line as a user runs it: the built binary, real processes, exit codes.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { cli as runCli, startCli, stderrLines } from '../support/cli.js';
import { tempDir } from '../support/store.js';

/** The built CLI's exit code, stdout, and its stderr as the messages of its JSON lines (what the assertions read). */
async function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runCli(args, { env });
  return {
    code: r.code,
    stdout: r.stdout,
    stderr: stderrLines(r.stderr)
      .map((l) => l.msg)
      .join('\n'),
  };
}

describe('usage-pipeline sandbox', () => {
  it('prints one JSON line with base_url and api_key when ready, serves, and stops cleanly on SIGTERM', async () => {
    const { proc, done } = startCli(['sandbox', '--port', '0', '--now', '2026-11-21T10:00:00Z']);
    const line = await new Promise<string>((resolve) => createInterface({ input: proc.stdout! }).once('line', resolve));
    const ready = JSON.parse(line) as { base_url: string; api_key: string };
    expect(ready.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const res = await fetch(`${ready.base_url}/programs?limit=5`, {
      headers: { authorization: `Bearer ${ready.api_key}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { programs: unknown[] }).programs.length).toBe(5);
    proc.kill('SIGTERM');
    expect((await done).code).toBe(0);
  });

  it('refuses an unknown scenario with exit 64', async () => {
    const r = await cli(['sandbox', '--scenario', 'huge']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--scenario "huge" is unknown; choose one of small, medium, large, bigint/);
  });
});

describe('usage-pipeline collect and report exit codes', () => {
  let sb: Sandbox;
  const { dir, cleanup } = tempDir('usage-cli-');
  const db = join(dir, 'usage.duckdb');
  beforeAll(async () => {
    sb = await startSandbox({ scenario: 'small', advance: true });
  });
  afterAll(async () => {
    await sb?.close();
    cleanup();
  });

  it.each([
    [['collect', '--granularity', 'weekly'], /unknown value "weekly"/],
    [['collect', '--from', '2026-02-30'], /not a calendar date/],
    [['collect', '--config', 'nope.toml'], /cannot read config file/],
    [['collect', '--frm', '2026-01-01'], /unknown option '--frm'/],
    [['report', '--month', '26-10'], /is not a month/],
    [['report'], /say which period/],
  ])('%j exits 64 before any request, saying what to do', async (args, message) => {
    sb.resetStats();
    const r = await cli([...args, '--db', db], { USAGE_API_KEY: sb.apiKey, USAGE_BASE_URL: sb.baseUrl });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
    expect(sb.stats().total).toBe(0);
  });

  it('exits 64 on an invalid config file, listing every problem by its dotted path', async () => {
    const cfg = join(dir, 'bad.toml');
    writeFileSync(cfg, '[api.rate_limit]\nper_minute = 0\n[collect]\nsources = ["v3"]\n');
    sb.resetStats();
    const r = await cli(['collect', '--config', cfg, '--db', db], {
      USAGE_API_KEY: sb.apiKey,
      USAGE_BASE_URL: sb.baseUrl,
    });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/2 problem/);
    expect(r.stderr).toMatch(/api\.rate_limit\.per_minute/);
    expect(r.stderr).toMatch(/collect\.sources\.0/);
    expect(sb.stats().total).toBe(0);
  });

  it('exits 64 without a key, and never prints the key it was given', async () => {
    const r = await cli(['collect', '--db', db], { USAGE_BASE_URL: sb.baseUrl });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/USAGE_API_KEY/);
    const ok = await cli(['collect', '--db', db, '--granularity', 'daily', '--json'], {
      USAGE_API_KEY: sb.apiKey,
      USAGE_BASE_URL: sb.baseUrl,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout + ok.stderr).not.toContain(sb.apiKey);
    expect(JSON.parse(ok.stdout).status).toBe('complete');
  });

  it('report exits 2 and says PARTIAL for a month that is not completely collected; --require-complete exits 1', async () => {
    const month = new Date().toISOString().slice(0, 7); // the current month can't be complete yet
    const r = await cli(['report', '--month', month, '--db', db, '--out', join(dir, 'reports')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/PARTIAL/);
    const strict = await cli([
      'report',
      '--month',
      month,
      '--db',
      db,
      '--out',
      join(dir, 'strict'),
      '--require-complete',
    ]);
    expect(strict.code).toBe(1);
    expect(strict.stderr.length).toBeGreaterThan(0);
  });

  it('status prints coverage and the last run', async () => {
    const r = await cli(['status', '--db', db]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/v2_programs\s+daily/);
    const j = await cli(['status', '--db', db, '--json']);
    expect(JSON.parse(j.stdout).runs[0].status).toBe('complete');
  });
});
