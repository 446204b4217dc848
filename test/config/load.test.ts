import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
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

  it('applies defaults when no file exists at the default path', () => {
    const dir = mkdtempSync(join(tmpdir(), 'usage-config-'));
    const { config, path } = loadConfig({ cwd: dir, env: {} });
    expect(path).toBeNull();
    expect(config.store.db).toBe('data/usage.duckdb');
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
    expect(() => loadConfig({ cwd: dir, path: 'usage.toml', explicit: true, env: {} })).toThrow(/not valid TOML \(line 1/);
  });

  it('refuses a missing explicit --config', () => {
    expect(() => loadConfig({ cwd: tmpdir(), path: 'nope.toml', explicit: true, env: {} })).toThrow(/cannot read config file/);
  });

  it('lets USAGE_BASE_URL and USAGE_DB override the file', () => {
    const { config } = loadConfig({ cwd: process.cwd(), env: { USAGE_BASE_URL: 'http://127.0.0.1:9/v1', USAGE_DB: '/tmp/x.duckdb' } });
    expect(config.api.base_url).toBe('http://127.0.0.1:9/v1');
    expect(config.store.db).toBe('/tmp/x.duckdb');
  });
});
