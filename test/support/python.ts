// The project-local Python the tests use: a virtual environment in .venv/ holding the packages of
// test/support/requirements.txt, created by the test setup (test/support/tools.ts) when missing.
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const VENV_DIR = join(REPO_ROOT, '.venv');
export const PYTHON_REQUIREMENTS = join(REPO_ROOT, 'test/support/requirements.txt');

/** The virtual environment's python executable (exists once the test setup has run). */
export function venvPython(): string {
  return process.platform === 'win32' ? join(VENV_DIR, 'Scripts', 'python.exe') : join(VENV_DIR, 'bin', 'python');
}
