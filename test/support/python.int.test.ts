// The test setup's Python environment is there and holds the packages of requirements.txt.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { venvPython, VENV_DIR } from './python.js';

describe("the tests' Python environment", () => {
  it('is the project-local .venv and imports pyarrow and polars', () => {
    expect(venvPython().startsWith(VENV_DIR)).toBe(true);
    const out = execFileSync(
      venvPython(),
      ['-c', 'import sys, pyarrow, polars; print(sys.prefix); print(pyarrow.__version__, polars.__version__)'],
      { encoding: 'utf8' },
    );
    const [prefix, versions] = out.trim().split('\n');
    expect(prefix).toBe(VENV_DIR);
    expect(versions).toMatch(/^\d+\.\d+\S* \d+\.\d+/);
  });
});
