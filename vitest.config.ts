import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/build.ts', 'test/support/tools.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // DuckDB files and sandbox ports are per test file; files run in parallel across 2 cores.
    pool: 'forks',
    env: { TZ: 'UTC' },
  },
});
