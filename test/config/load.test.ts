import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultPlaces, loadConfig } from '../../src/config/load.js';
import { UsageError } from '../../src/domain/errors.js';

function dirWith(toml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'usage-config-'));
  writeFileSync(join(dir, 'usage.toml'), toml);
  return dir;
}

describe('loadConfig', () => {
  it('reads the shipped config/usage.toml', () => {
    const { config, path } = loadConfig({ cwd: process.cwd(), env: {} });
    expect(path).toMatch(/config\/usage\.toml$/);
    expect(config.api.rate_limit.per_minute).toBe(700);
    expect(config.collect.granularities).toEqual(['hourly', 'daily', 'monthly']);
  });

  it('applies defaults when no config file exists anywhere: in a checkout, its data/, reports/ and price book', () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-config-'));
    const { config, path } = loadConfig({
      cwd: dir,
      env: { XDG_CONFIG_HOME: join(dir, 'xdg') },
      systemDir: join(dir, 'etc'),
    });
    expect(path).toBeNull();
    const repo = resolve(import.meta.dirname, '../..');
    expect(config.store.db).toBe(join(repo, 'data/usage.duckdb'));
    expect(config.report.out_dir).toBe(join(repo, 'reports'));
    expect(config.report.prices).toBe(join(repo, 'config/prices.toml'));
    expect(defaultPlaces({})).toEqual({
      db: config.store.db,
      reports: config.report.out_dir,
      prices: config.report.prices,
    });
  });

  it('looks for --config, USAGE_CONFIG, ./config/usage.toml, $XDG_CONFIG_HOME, /etc in that order; relative paths sit beside the file', () => {
    const root = mkdtempSync(join(tmpdir(), 'usage-config-'));
    const at = (sub: string, db: string) => {
      mkdirSync(join(root, sub), { recursive: true });
      writeFileSync(join(root, sub, 'usage.toml'), `[store]\ndb = "${db}"\n[report]\nout_dir = "out"\n`);
      return join(root, sub, 'usage.toml');
    };
    const etc = at('etc', 'etc.duckdb');
    const xdg = at('xdg/usage-pipeline', 'xdg.duckdb');
    const local = at('cwd/config', 'local.duckdb');
    const env = at('env', 'env.duckdb');
    const flag = at('flag', 'flag.duckdb');
    const opts = { cwd: join(root, 'cwd'), systemDir: join(root, 'etc') };
    const xdgEnv = { XDG_CONFIG_HOME: join(root, 'xdg') };
    const found = (o: Parameters<typeof loadConfig>[0]) => {
      const l = loadConfig(o);
      return [l.path, l.config.store.db, l.config.report.out_dir];
    };
    expect(found({ ...opts, path: flag, env: { ...xdgEnv, USAGE_CONFIG: env } })).toEqual([
      flag,
      join(root, 'flag/flag.duckdb'),
      join(root, 'flag/out'),
    ]);
    expect(found({ ...opts, env: { ...xdgEnv, USAGE_CONFIG: env } })).toEqual([
      env,
      join(root, 'env/env.duckdb'),
      join(root, 'env/out'),
    ]);
    expect(found({ ...opts, env: xdgEnv })).toEqual([
      local,
      join(root, 'cwd/config/local.duckdb'),
      join(root, 'cwd/config/out'),
    ]);
    expect(found({ ...opts, cwd: root, env: xdgEnv })).toEqual([
      xdg,
      join(root, 'xdg/usage-pipeline/xdg.duckdb'),
      join(root, 'xdg/usage-pipeline/out'),
    ]);
    expect(found({ ...opts, cwd: root, env: { XDG_CONFIG_HOME: join(root, 'none') } })).toEqual([
      etc,
      join(root, 'etc/etc.duckdb'),
      join(root, 'etc/out'),
    ]);
    // USAGE_CONFIG must exist, as --config must; USAGE_DB is the caller's path, relative to the working directory.
    expect(() => loadConfig({ ...opts, env: { USAGE_CONFIG: join(root, 'nope.toml') } })).toThrow(
      /cannot read config file .*nope\.toml.*USAGE_CONFIG/,
    );
    expect(loadConfig({ ...opts, env: { ...xdgEnv, USAGE_DB: 'x.duckdb' } }).config.store.db).toBe(
      join(root, 'cwd/x.duckdb'),
    );
  });

  it('lists every problem with its dotted path', () => {
    const dir = dirWith(`
[api]
base_url = "not a url"
[api.rate_limit]
per_minute = -5
[collect]
granularities = ["weekly"]
[colect]
x = 1
`);
    let err: unknown;
    try {
      loadConfig({ cwd: dir, path: 'usage.toml', explicit: true, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/4 problem/);
    expect(msg).toMatch(/api\.base_url/);
    expect(msg).toMatch(/api\.rate_limit\.per_minute/);
    expect(msg).toMatch(/collect\.granularities\.0/);
    expect(msg).toMatch(/colect/);
  });

  it('names the line of a TOML syntax error', () => {
    const dir = dirWith('[api\nbase_url = 1');
    expect(() => loadConfig({ cwd: dir, path: 'usage.toml', explicit: true, env: {} })).toThrow(
      /not valid TOML \(line 1/,
    );
  });

  it('refuses a missing explicit --config', () => {
    expect(() => loadConfig({ cwd: tmpdir(), path: 'nope.toml', explicit: true, env: {} })).toThrow(
      /cannot read config file/,
    );
  });

  it('lets USAGE_BASE_URL and USAGE_DB override the file', () => {
    const { config } = loadConfig({
      cwd: process.cwd(),
      env: { USAGE_BASE_URL: 'http://127.0.0.1:9/v1', USAGE_DB: '/tmp/x.duckdb' },
    });
    expect(config.api.base_url).toBe('http://127.0.0.1:9/v1');
    expect(config.store.db).toBe('/tmp/x.duckdb');
  });
});
