// The README's server install, run as printed: its operator blocks are read from README.md (so the two
// cannot drift) and run as root in a private mount namespace whose /etc, /usr and /var are overlays on
// the machine's own (this machine's files stay untouched; every write lands in the test's folders). So
// `npm install -g` of the packed tarball, `useradd` of the service user, its folders and its key file
// happen as on a fresh server; then the first run by hand (collect, report, status) as that user
// against the sandbox, and the daemon's monthly export, each writing where the config says.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { distModule } from '../support/child.js';
import { packedTarball } from '../support/pack.js';

const REPO = resolve(import.meta.dirname, '../..');
const NPM_TIMEOUT_MS = 240_000;

/** The fenced block after `<!-- NAME` in the README, as printed. */
export function readmeBlock(readme: string, name: string): string {
  const at = readme.indexOf(`<!-- ${name}`);
  if (at < 0) throw new Error(`README.md has no <!-- ${name} --> block`);
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (!m) throw new Error(`README.md's ${name} marker is not followed by a sh block`);
  return m[1]!;
}

/** Previous calendar month (UTC), as `report --month last` computes it. */
const lastMonth = () => {
  const d = new Date();
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
};

describe('the README operator section, run as printed as root', () => {
  const root = mkdtempSync(join(tmpdir(), 'usage-operator-'));
  const upper = (dir: 'etc' | 'usr' | 'var', ...p: string[]) => join(root, `${dir}-up`, ...p);
  let sandbox: ChildProcess | undefined;
  let api: { base_url: string; api_key: string };
  let out = '';
  let err = '';

  beforeAll(async () => {
    if (process.getuid?.() !== 0)
      throw new Error('this test creates a user and mounts overlays: run the suite as root (or in a root container)');
    // The README's install runs `npm install -g ./usage-pipeline-*.tgz` here: the run's pack, copied in.
    const packed = await packedTarball();
    expect(packed.files).toContain('deploy/usage.toml');
    copyFileSync(packed.tarball, join(root, basename(packed.tarball)));
    sandbox = spawn(process.execPath, [distModule('src/cli/main.ts'), 'sandbox', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    api = JSON.parse(
      await new Promise<string>((ok) => createInterface({ input: sandbox!.stdout! }).once('line', ok)),
    ) as typeof api;

    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const firstRun = readmeBlock(readme, 'operator-first-run')
      .split('\n')
      .filter((l) => l.trim() !== '');
    const script = [
      'set -eu',
      'unset TMPDIR',
      // A fresh server's view: the machine's /etc, /usr and /var, with every write going to the test's folders.
      ...['etc', 'usr', 'var'].map(
        (d) =>
          `mkdir -p ${root}/${d}-up ${root}/${d}-work && mount -t overlay overlay -o lowerdir=/${d},upperdir=${root}/${d}-up,workdir=${root}/${d}-work /${d}`,
      ),
      `cd ${root}`,
      `export API='${api.base_url}' KEY='${api.api_key}' npm_config_prefer_offline=true npm_config_audit=false npm_config_fund=false`,
      readmeBlock(readme, 'operator-install'),
      'echo "@@installed"; echo "@@installed" >&2',
      'set +e',
      // Each line of the first run, its exit code after it.
      ...firstRun.flatMap((line, i) => [line, `echo "@@exit $? ${i}"`]),
      // The daemon's monthly export: last month's reports removed, the export made due today, then the
      // daemon as the service user until the export's manifest is back.
      `rm -rf /var/lib/usage-pipeline/reports/${lastMonth()}`,
      `printf 'monthly_export_day = 1\\nmonthly_export = "0 0 1 1 *"\\n' >> /etc/usage-pipeline/usage.toml`,
      'runuser -u usage -- usage-pipeline schedule 2> /var/log/usage-pipeline/daemon.log & pid=$!',
      // Looked for every 0.1 s (up to 2 minutes), so the wait ends close to when the manifest appears.
      `for i in $(seq 1 1200); do [ -e /var/lib/usage-pipeline/reports/${lastMonth()}/manifest.json ] && break; sleep 0.1; done`,
      'kill -TERM $pid; wait $pid; echo "@@daemon $?"',
    ].join('\n');
    writeFileSync(join(root, 'steps.sh'), script);
    mkdirSync(join(root, 'empty'), { recursive: true });
    const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', join(root, 'steps.sh')], {
      cwd: join(root, 'empty'),
      encoding: 'utf8',
      timeout: 2 * NPM_TIMEOUT_MS,
    });
    if (r.status !== 0)
      throw new Error(`the README's steps failed (exit ${r.status ?? r.signal}):\n${r.stdout}\n${r.stderr}`);
    out = r.stdout;
    err = r.stderr;
  }, 3 * NPM_TIMEOUT_MS);

  afterAll(() => {
    sandbox?.kill('SIGTERM');
    // Overlay work folders hold root-only entries; the run's temporary root removes them.
  });

  it('creates the service user, its folders and a key only it can read', () => {
    expect(out).toContain('@@installed');
    // npm installs the tarball without a warning (no install script of the checkout's ships).
    expect(err.split('@@installed')[0]).not.toMatch(/npm warn/i);
    const passwd = readFileSync(upper('etc', 'passwd'), 'utf8');
    const user = /^usage:x:(\d+):(\d+):[^:]*:([^:]*):([^:]*)$/m.exec(passwd);
    expect(user, 'usage in /etc/passwd').not.toBeNull();
    const [uid, gid] = [Number(user![1]), Number(user![2])];
    expect(uid).toBeLessThan(1000); // a system user
    expect(user![3]).toBe('/var/lib/usage-pipeline');
    const key = statSync(upper('etc', 'usage-pipeline', 'key'));
    expect([key.uid, key.gid, key.mode & 0o777]).toEqual([uid, gid, 0o600]);
    expect(readFileSync(upper('etc', 'usage-pipeline', 'key'), 'utf8').trim()).toBe(api.api_key);
    const config = statSync(upper('etc', 'usage-pipeline', 'usage.toml'));
    expect([config.uid, config.gid, config.mode & 0o777]).toEqual([0, gid, 0o640]);
    for (const dir of [
      ['lib', 'usage-pipeline'],
      ['lib', 'usage-pipeline', 'metrics'],
      ['log', 'usage-pipeline'],
    ]) {
      const st = statSync(upper('var', ...dir));
      expect([dir.join('/'), st.uid, st.gid]).toEqual([dir.join('/'), uid, gid]);
    }
    expect(
      existsSync(upper('usr', 'bin', 'usage-pipeline')) || existsSync(upper('usr', 'local', 'bin', 'usage-pipeline')),
    ).toBe(true);
  });

  it('collects, reports and tells its status as the service user, writing where the config says', () => {
    const codes = [...out.matchAll(/^@@exit (\d+) (\d+)$/gm)].map((m) => Number(m[1]));
    expect(codes.length, out).toBe(4);
    expect(codes[1], out).toBe(0); // collect
    expect([0, 2], out).toContain(codes[2]); // report: 2 when last month is only partly collected
    expect(codes[3], out).toBe(0); // status
    const state = upper('var', 'lib', 'usage-pipeline');
    expect(existsSync(join(state, 'usage.duckdb'))).toBe(true);
    expect(existsSync(join(state, 'usage.analyst.duckdb'))).toBe(true);
    const metrics = readFileSync(join(state, 'metrics', 'usage-pipeline.prom'), 'utf8');
    expect(metrics).toMatch(/^usage_pipeline_last_run_outcome\{command="collect",outcome="complete"\} 1$/m);
    expect(metrics).toMatch(/^usage_pipeline_last_run_outcome\{command="report",outcome="(complete|partial)"\} 1$/m);
    expect(metrics).toMatch(
      /^usage_pipeline_data_as_of_timestamp_seconds\{source="v2_programs",granularity="daily"\} \d+/m,
    );
    // promtool's own reading of the file an installed service wrote.
    execFileSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
  });

  it('lets the daemon write the monthly export under the configured reports folder', () => {
    const log = readFileSync(upper('var', 'log', 'usage-pipeline', 'daemon.log'), 'utf8');
    expect(existsSync(upper('var', 'lib', 'usage-pipeline', 'reports', lastMonth(), 'manifest.json')), log).toBe(true);
    // runuser passes the SIGTERM on and ends with it (143); the daemon itself stopped cleanly.
    expect(out, out).toMatch(/^@@daemon (0|143)$/m);
    expect(log).toMatch(/"msg":"stopped"/);
    const metrics = readFileSync(upper('var', 'lib', 'usage-pipeline', 'metrics', 'usage-pipeline.prom'), 'utf8');
    expect(metrics).toMatch(/^usage_pipeline_last_success_timestamp_seconds\{command="schedule_monthly"\} \d+/m);
  });
});
