import { defineConfig } from 'vitest/config';
import CostSequencer from './test/support/sequencer.js';

/**
 * A test that opens sockets (the sandbox over HTTP, Chromium's DevTools) or starts child processes (the
 * built CLI, LibreOffice, lock holders) is named *.int.test.ts and runs in the integration project.
 * Everything else is a unit test: in-process, real DuckDB files allowed, no network and no processes
 * (test/docs/layout.test.ts holds unit tests to that). `npx vitest run --project unit` runs those alone.
 */
const INTEGRATION = 'test/**/*.int.test.ts';

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB files, temporary folders and sandbox ports (port 0) are per test file, so files run in parallel.
    // Vitest's default in a run is one worker fewer than the CPUs: on 2 cores, one file at a time. One a core
    // (a third, tried, made the medium-world files twice as slow and past their timeouts: they compute).
    pool: 'forks',
    maxWorkers: '100%',
    // The costliest files first, across both projects (test/support/sequencer.ts).
    sequence: { sequencer: CostSequencer },
    env: { TZ: 'UTC' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [INTEGRATION],
          globalSetup: ['test/support/tmpRoot.ts'],
        },
      },
      // Compiled once first (test/support/build.ts), so child processes run today's code from dist/; the
      // tools they need beyond Node (LibreOffice, Chromium, .venv's Python packages) installed when missing
      // (test/support/tools.ts). Temporary folders of both go under one per run, removed at its end (tmpRoot.ts).
      {
        extends: true,
        test: {
          name: 'integration',
          include: [INTEGRATION],
          globalSetup: ['test/support/tmpRoot.ts', 'test/support/build.ts', 'test/support/tools.ts'],
        },
      },
    ],
  },
});
