// Global setup: every test file's temporary folders (mkdtemp in os.tmpdir(), here and in the child processes
// tests start) go under one folder of this run, removed when the run ends. A test that fails, or a child it
// kills, cannot remove its own; left in /tmp they filled the disk of a machine that runs the suite often.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Set while a run's folder is in place: both projects' setups run in one process, and share it. */
export const RUN_FOLDER = 'USAGE_PIPELINE_TEST_TMPDIR';

/** A nested setup's teardown: the run that made the folder removes it. */
function keptByOuterRun(): void {
  // nothing to remove here
}

export default function setup(): () => void {
  if (process.env[RUN_FOLDER]) return keptByOuterRun;
  const before = process.env.TMPDIR;
  const root = mkdtempSync(join(tmpdir(), 'usage-pipeline-tests-'));
  // Test workers are forked after the global setups run, so they and their children inherit it.
  process.env.TMPDIR = root;
  process.env[RUN_FOLDER] = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    delete process.env[RUN_FOLDER];
    rmSync(root, { recursive: true, force: true });
  };
}
