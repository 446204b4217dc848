import { defineConfig } from 'vitest/config';

/**
 * Tests that open sockets (the sandbox over HTTP, Chromium's DevTools) or start child processes (the
 * built CLI, LibreOffice, lock holders). Everything else is a unit test: in-process, real DuckDB files
 * allowed, no network and no processes. `npx vitest run --project unit` runs those alone.
 */
export const INTEGRATION = [
  'test/alerts/delivery.test.ts',
  'test/analyst/spend-views.test.ts',
  'test/api/client.test.ts',
  'test/cli/cli.test.ts',
  'test/cli/demo.test.ts',
  'test/cli/operate.test.ts',
  'test/cli/server.test.ts',
  'test/cli/width.test.ts',
  'test/collect/collect.test.ts',
  'test/collect/crash.test.ts',
  'test/collect/memoryLimit.test.ts',
  'test/collect/hostile.test.ts',
  'test/collect/firstRun.test.ts',
  'test/collect/frameworkRequests.test.ts',
  'test/collect/nonsense.test.ts',
  'test/export/dataset.test.ts',
  'test/export/retention.test.ts',
  'test/package/deploy.test.ts',
  'test/package/operator.test.ts',
  'test/package/tarball.test.ts',
  'test/report/arrow.test.ts',
  'test/report/atomic.test.ts',
  'test/report/html.test.ts',
  'test/report/memoryLimit.test.ts',
  'test/report/report.test.ts',
  'test/report/stageFolder.test.ts',
  'test/sandbox/errors.test.ts',
  'test/sandbox/large.test.ts',
  'test/sandbox/paging.test.ts',
  'test/sandbox/truth.test.ts',
  'test/sandbox/usage.test.ts',
  'test/schedule/crash.test.ts',
  'test/schedule/daemon.test.ts',
  'test/schedule/lock.test.ts',
  'test/schedule/overlap.test.ts',
  'test/schedule/shutdown.test.ts',
  'test/store/crash.test.ts',
  'test/store/lock.test.ts',
  'test/support/python.test.ts',
];

export default defineConfig({
  test: {
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB files and sandbox ports are per test file; files run in parallel across 2 cores.
    pool: 'forks',
    env: { TZ: 'UTC' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: INTEGRATION, globalSetup: ['test/support/tmpRoot.ts'] } },
      // Compiled once first (test/support/build.ts), so child processes run today's code from dist/; the
      // tools they need beyond Node (LibreOffice, Chromium, .venv's Python packages) installed when missing
      // (test/support/tools.ts). Temporary folders of both go under one per run, removed at its end (tmpRoot.ts).
      { extends: true, test: { name: 'integration', include: INTEGRATION, globalSetup: ['test/support/tmpRoot.ts', 'test/support/build.ts', 'test/support/tools.ts'] } },
    ],
  },
});
