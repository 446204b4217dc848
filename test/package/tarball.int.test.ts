// The package as an operator installs it: `npm pack`, then `npm install -g` of the tarball into a fresh
// prefix without dev dependencies, then the installed `usage-pipeline` on the PATH, run from an empty
// directory with an empty home: version, help, sandbox, collect, report, status, query and schedule.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packedTarball } from '../support/pack.js';

const REPO = resolve(import.meta.dirname, '../..');
const NPM_TIMEOUT_MS = 240_000;

describe('the packed tarball, installed globally without dev dependencies', () => {
  const root = mkdtempSync(join(tmpdir(), 'usage-pack-'));
  const prefix = join(root, 'prefix');
  const home = join(root, 'home');
  const work = join(root, 'work');
  let bin: string;
  let env: NodeJS.ProcessEnv;
  let sandbox: ChildProcess | undefined;
  let api: { base_url: string; api_key: string };

  const run = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      const p = spawn(bin, args, { cwd: work, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      p.on('close', (code) => done({ code, stdout, stderr }));
    });

  beforeAll(async () => {
    mkdirSync(home);
    mkdirSync(work);
    const packed = await packedTarball();
    const files = packed.files;
    expect(files).toContain('dist/src/cli/main.js');
    expect(files).toContain('config/prices.toml');
    expect(files.some((f) => f.startsWith('queries/schema/'))).toBe(true);
    expect(files.some((f) => f.startsWith('queries/examples/'))).toBe(true);
    // The SQL beside its owner is read at run time relative to the package root (readSql): shipped as is.
    for (const dir of ['src/store/sql/', 'src/store/report/sql/'])
      expect(files.some((f) => f.startsWith(dir) && f.endsWith('.sql'))).toBe(true);
    const sqlInSrc = /^src\/[a-z]+(\/[a-z]+)?\/sql\/[^/]+\.sql$/;
    expect(
      files.filter(
        (f) => f.startsWith('test/') || (f.startsWith('src/') && !sqlInSrc.test(f)) || f.startsWith('dist/bench/'),
      ),
    ).toEqual([]);
    // No lifecycle script of the checkout's (prepare builds it) ships: npm would warn about it on install.
    const manifest = JSON.parse(
      execFileSync('tar', ['-xzOf', packed.tarball, 'package/package.json'], { encoding: 'utf8' }),
    ) as { scripts: Record<string, string> };
    expect(Object.keys(manifest.scripts).filter((k) => /^(pre|post)?(install|prepare)$/.test(k))).toEqual([]);
    const install = spawnSync(
      'npm',
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        packed.tarball,
        '--omit=dev',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
      ],
      {
        cwd: root,
        encoding: 'utf8',
        timeout: NPM_TIMEOUT_MS,
      },
    );
    expect(install.status, install.stderr).toBe(0);
    expect(install.stderr).not.toMatch(/npm warn/i);
    bin = join(prefix, 'bin', 'usage-pipeline');
    // Only the prefix's bin and node on the PATH; an empty home, so state goes to its XDG folder.
    env = { PATH: `${join(prefix, 'bin')}:${resolve(process.execPath, '..')}:/usr/bin:/bin`, HOME: home };
    sandbox = spawn(bin, ['sandbox', '--port', '0'], { cwd: work, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const first = await new Promise<string>((ok, fail) => {
      createInterface({ input: sandbox!.stdout! }).once('line', ok);
      sandbox!.once('exit', (c) => fail(new Error(`sandbox exited ${c}`)));
    });
    api = JSON.parse(first) as typeof api;
  }, 2 * NPM_TIMEOUT_MS);

  afterAll(() => {
    sandbox?.kill('SIGTERM');
    rmSync(root, { recursive: true, force: true });
  });

  it('has no dev dependency installed, and answers --version and --help with examples', async () => {
    const modules = readdirSync(join(prefix, 'lib', 'node_modules', 'usage-pipeline', 'node_modules'));
    expect(modules).not.toContain('typescript');
    expect(modules).not.toContain('vitest');
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')).version);
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    for (const cmd of ['collect', 'report', 'export', 'status', 'schedule', 'sandbox', 'query'])
      expect(help.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    expect(help.stdout).toMatch(/Examples:\n\s+\$ usage-pipeline /);
  });

  it('collects from its sandbox, reports and tells its status from an empty directory, state in XDG folders', async () => {
    const keyEnv = { USAGE_API_KEY: api.api_key, USAGE_BASE_URL: api.base_url };
    const collect = await run(['collect', '--granularity', 'daily'], keyEnv);
    expect(collect.code, collect.stderr).toBe(0);
    const state = join(home, '.local', 'state', 'usage-pipeline');
    expect(existsSync(join(state, 'usage.duckdb'))).toBe(true);
    const month = new Date().toISOString().slice(0, 7);
    const report = await run(['report', '--month', month, '--format', 'parquet,arrow']);
    expect([0, 2], report.stderr).toContain(report.code);
    expect(existsSync(join(state, 'reports', month, 'program_spend.parquet'))).toBe(true);
    expect(existsSync(join(state, 'reports', month, 'program_spend.arrow'))).toBe(true);
    const dataset = join(root, 'dataset');
    const exported = await run(['export', '--dataset', dataset, '--format', 'parquet,arrow']);
    expect(exported.code, exported.stderr).toBe(0);
    expect(existsSync(join(dataset, 'programs', 'part-0.parquet'))).toBe(true);
    const status = await run(['status', '--check']);
    expect(status.code, status.stdout).toBe(0);
    const query = await run(['query', 'SELECT count(*) AS n FROM usage_program', '--json']);
    expect(query.code, query.stderr).toBe(0);
    expect(Number(JSON.parse(query.stdout)[0].n)).toBeGreaterThan(0);
    expect(readdirSync(work)).toEqual([]); // nothing written where it ran
  }, 180_000); // five processes in a row, each opening DuckDB: over a minute on a loaded 2-core machine

  it('runs the daemon and stops it cleanly on SIGTERM', async () => {
    const daemon = spawn(bin, ['schedule'], {
      cwd: work,
      env: { ...env, USAGE_API_KEY: api.api_key, USAGE_BASE_URL: api.base_url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines = createInterface({ input: daemon.stderr });
    await new Promise<void>((ok) => lines.on('line', (l) => /"job started"|job started/.test(l) && ok()));
    daemon.kill('SIGTERM');
    const code = await new Promise<number | null>((ok) => daemon.on('exit', ok));
    expect(code).toBe(0);
  });
});
