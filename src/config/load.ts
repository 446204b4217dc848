// Loads config/*.toml, applies environment overrides, and reports every problem with its dotted path.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { configSchema, type Config } from './schema.js';

import { UsageError } from '../domain/errors.js';

export interface LoadedConfig {
  config: Config;
  /** Absolute path of the file read, or null when none existed and defaults apply. */
  path: string | null;
  /** The directory relative paths in the config resolve against. */
  baseDir: string;
}

export interface LoadConfigOptions {
  path?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The default path may be missing (defaults apply); an explicit --config must exist. */
  explicit?: boolean;
}

export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const file = resolve(cwd, opts.path ?? 'config/usage.toml');
  let raw: Record<string, unknown> = {};
  let path: string | null = file;
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (opts.explicit || (err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new UsageError(`cannot read config file ${file}: ${(err as Error).message}. Pass --config <file> with a readable TOML file.`);
    }
    path = null;
  }
  if (text !== undefined) {
    try {
      raw = parseToml(text) as Record<string, unknown>;
    } catch (err) {
      const detail = err instanceof TomlError ? `line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}` : (err as Error).message;
      throw new UsageError(`config file ${file} is not valid TOML (${detail}).`);
    }
  }
  applyEnvOverrides(raw, env);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const where = i.path.length ? i.path.map(String).join('.') : '(top level)';
      const keys = 'keys' in i && Array.isArray(i.keys) ? ` ${i.keys.join(', ')}` : '';
      return `  - ${where}${keys}: ${i.message}`;
    });
    throw new UsageError(`config file ${path ?? file} has ${problems.length} problem(s):\n${problems.join('\n')}`);
  }
  return { config: parsed.data, path, baseDir: cwd };
}

function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): void {
  const section = (name: string): Record<string, unknown> => {
    const s = raw[name];
    if (s && typeof s === 'object' && !Array.isArray(s)) return s as Record<string, unknown>;
    const fresh: Record<string, unknown> = {};
    raw[name] = fresh;
    return fresh;
  };
  if (env.USAGE_BASE_URL) section('api').base_url = env.USAGE_BASE_URL;
  if (env.USAGE_DB) section('store').db = env.USAGE_DB;
}
