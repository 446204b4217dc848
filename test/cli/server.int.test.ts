// What a server install relies on: no base URL is no collection (exit 64, nothing created), reports go
// beside a configured database, [export] dataset is the export's default, and the example queries are
// found wherever the package is (from a folder that is not the checkout).
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli } from '../support/cli.js';
import { loadConfig } from '../../src/config/load.js';

describe("a server's configuration", () => {
  it('refuses a collect with no base URL configured, naming USAGE_BASE_URL and [api] base_url, before any side effect', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-nourl-'));
    const config = join(dir, 'usage.toml');
    writeFileSync(config, '[store]\ndb = "state/usage.duckdb"\n');
    const r = await cli(['collect', '--config', config], { cwd: dir, env: { USAGE_API_KEY: 'k', HOME: dir } });
    expect(r.code, r.stderr).toBe(64);
    expect(r.stderr).toContain('USAGE_BASE_URL');
    expect(r.stderr).toContain('[api] base_url');
    expect(readdirSync(dir)).toEqual(['usage.toml']);
    // The daemon likewise, at start-up.
    const d = await cli(['schedule', '--config', config], { cwd: dir, env: { USAGE_API_KEY: 'k', HOME: dir } });
    expect(d.code).toBe(64);
    expect(d.stderr).toContain('USAGE_BASE_URL');
  });

  it('puts the reports beside a configured database, and takes the dataset and metrics paths from the config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-places-'));
    writeFileSync(
      join(dir, 'usage.toml'),
      '[store]\ndb = "/srv/usage/usage.duckdb"\n[export]\ndataset = "dataset"\n[metrics]\ntextfile = "m/usage.prom"\n',
    );
    const { config } = loadConfig({ path: join(dir, 'usage.toml'), cwd: '/', env: {} });
    expect(config.report.out_dir).toBe('/srv/usage/reports');
    expect(config.export.dataset).toBe(join(dir, 'dataset'));
    expect(config.metrics.textfile).toBe(join(dir, 'm', 'usage.prom'));
    expect(config.api.base_url).toBeUndefined();
    const env = loadConfig({ path: join(dir, 'usage.toml'), cwd: '/', env: { USAGE_DB: '/data/x.duckdb' } });
    expect(env.config.report.out_dir).toBe('/data/reports');
  });

  it('lists and runs the shipped example queries from any folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-examples-'));
    const list = await cli(['query', '--examples'], { cwd: dir, env: { HOME: dir } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^compute_hours_last_month +the five programs/m);
    for (const l of list.stdout.split('\n')) expect(l.length).toBeLessThanOrEqual(80);
    // An unknown name is bad input that lists the names; a known one reaches the (missing) analyst copy.
    const bad = await cli(['query', '--example', 'nope', '--db', join(dir, 'u.duckdb')], {
      cwd: dir,
      env: { HOME: dir },
    });
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain('compute_hours_last_month');
    const known = await cli(['query', '--example', 'compute_hours_last_month', '--db', join(dir, 'u.duckdb')], {
      cwd: dir,
      env: { HOME: dir },
    });
    expect(known.code).toBe(64);
    expect(known.stderr).toContain('no analyst copy');
    expect(existsSync(join(dir, 'u.duckdb'))).toBe(false);
  });
});
