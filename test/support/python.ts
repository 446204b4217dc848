// The project-local Python environment the tests use as independent readers (pyarrow, polars):
// `.venv/` is created on first use when missing (pip installs from the configured index or mirror).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../src/store/sql.js';

const PACKAGES = ['pyarrow', 'polars'];

/** The venv's python, after creating `.venv` with pyarrow and polars if it is not there yet. */
export function venvPython(): string {
  const venv = join(packageRoot(), '.venv');
  const python = join(venv, 'bin', 'python');
  const ready = () => {
    try {
      execFileSync(python, ['-c', `import ${PACKAGES.join(', ')}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (existsSync(python) && ready()) return python;
  if (!existsSync(python)) execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(python, ['-m', 'pip', 'install', '--quiet', ...PACKAGES], { stdio: 'inherit' });
  return python;
}
