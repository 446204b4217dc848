// Vitest global setup: installs what the tests need beyond Node when it is missing, the way
// `playwright install --with-deps` does, so that `npm test` passes on a fresh machine:
// - Debian packages (LibreOffice opens the workbook, Chromium renders the HTML report) with apt-get
//   when running as root;
// - Python packages into the project-local virtual environment .venv/ (see python.ts).
// When that is impossible it fails with one line saying exactly what to install: no test is skipped.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PYTHON_REQUIREMENTS, REPO_ROOT, VENV_DIR, venvPython } from './python.js';

/** A program the tests run, and the Debian package that provides it. */
const PROGRAMS: { commands: string[]; pkg: string }[] = [
  { commands: ['soffice'], pkg: 'libreoffice-calc' },
  { commands: ['chromium', 'chromium-browser'], pkg: 'chromium' },
  { commands: ['python3'], pkg: 'python3' },
  // The shipped units (systemd-analyze verify) and alert rules and metrics (promtool).
  { commands: ['systemd-analyze'], pkg: 'systemd' },
  { commands: ['promtool'], pkg: 'prometheus' },
];
/** Stamp in .venv/ of the requirements last installed, so an unchanged list costs no pip call. */
const STAMP = join(VENV_DIR, '.requirements.sha256');

class SetupError extends Error {}

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** The one command that installs `pkgs`, `sudo` on each part when not root. */
export function aptCommand(pkgs: string[], sudo: boolean): string {
  const s = sudo ? 'sudo ' : '';
  return `${s}apt-get update && ${s}apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
}

function aptInstall(pkgs: string[], why: string): void {
  if (!isRoot() || !onPath('apt-get')) {
    throw new SetupError(
      `the tests need ${why}: install it with \`${aptCommand(pkgs, true)}\` (or your system's packages for ${pkgs.join(', ')}), then run npm test again`,
    );
  }
  process.stderr.write(`test setup: installing ${pkgs.join(', ')} (${why})...\n`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...pkgs],
  ]) {
    const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
    if (r.status !== 0)
      throw new SetupError(
        `\`${aptCommand(pkgs, false)}\` failed (exit ${r.status ?? r.signal}): run it yourself, then npm test again`,
      );
  }
}

/** A virtual environment with pip: one made without ensurepip (python3-venv missing) has none. */
const venvWorks = () =>
  existsSync(venvPython()) && spawnSync(venvPython(), ['-m', 'pip', '--version'], { stdio: 'ignore' }).status === 0;

const makeVenv = () =>
  spawnSync('python3', ['-m', 'venv', '--clear', VENV_DIR], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });

/** Every Debian package missing, asked for at once: the programs, and python3-venv when a venv cannot be made. */
function systemPackages(): void {
  const missing = PROGRAMS.filter((p) => !p.commands.some(onPath));
  const pkgs = missing.map((p) => p.pkg);
  const why = missing.map((p) => p.commands[0]!);
  // Debian splits venv's ensurepip into python3-venv; without it `python3 -m venv` fails or leaves a .venv
  // without pip. So the virtual environment is made (again) now, and python3-venv asked for with the rest.
  if (!venvWorks() && onPath('python3')) makeVenv();
  if (!venvWorks()) {
    pkgs.push('python3-venv');
    why.push('python3 -m venv');
  }
  if (pkgs.length) aptInstall(pkgs, why.join(', '));
}

function pythonPackages(): void {
  const requirements = readFileSync(PYTHON_REQUIREMENTS, 'utf8');
  const digest = createHash('sha256').update(requirements).digest('hex');
  const python = venvPython();
  if (existsSync(python) && existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === digest && venvWorks()) return;
  const venvHint = `python3 -m venv --clear .venv && .venv/bin/python -m pip install -r test/support/requirements.txt`;
  if (!venvWorks()) {
    // Missing, or broken (made before python3-venv was installed: no pip): made again from scratch.
    const r = makeVenv();
    if (r.status !== 0 || !venvWorks())
      throw new SetupError(
        `cannot create the tests' Python environment (${String(r.stderr).trim().split('\n').at(-1)}): run \`${venvHint}\``,
      );
  }
  process.stderr.write('test setup: installing the Python packages of test/support/requirements.txt into .venv/...\n');
  // One retry, not pip's five with back-off: where an index cannot be reached (a machine whose packages
  // come from a local wheel mirror) the five cost about 25 s of a fresh run, and one still rides over a blip.
  const pip = spawnSync(python, ['-m', 'pip', 'install', '-q', '--retries', '1', '-r', PYTHON_REQUIREMENTS], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (pip.status !== 0)
    throw new SetupError(
      `pip could not install test/support/requirements.txt into .venv/: run \`${venvHint}\` and fix what it reports`,
    );
  writeFileSync(STAMP, digest + '\n');
}

export default function setup(): void {
  try {
    systemPackages();
    pythonPackages();
  } catch (err) {
    if (err instanceof SetupError) {
      // One line, and a failed run: a missing tool must never turn into skipped tests.
      process.stderr.write(`npm test: ${err.message}\n`);
      throw new Error(err.message, { cause: err });
    }
    throw err;
  }
  // Fail here, once, rather than in every test that needs a tool, if an install did not provide it.
  execFileSync(venvPython(), ['-c', 'import pyarrow, polars'], { stdio: 'pipe' });
}
