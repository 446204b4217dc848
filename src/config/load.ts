// Finds and loads the configuration, applies environment overrides, resolves its paths, and reports
// every problem with its dotted path. Lookup order: --config, USAGE_CONFIG, ./config/usage.toml,
// $XDG_CONFIG_HOME/usage-pipeline/usage.toml (default ~/.config), /etc/usage-pipeline/usage.toml.
// Relative paths inside a config file resolve against that file's folder, paths from the environment
// against the working directory. Unset paths default to the checkout's data/, reports/ and
// config/prices.toml when running from a git checkout, else to XDG folders (see defaultPlaces).
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from './packageRoot.js';
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
  /** The system-wide folder (tests); default /etc/usage-pipeline. */
  systemDir?: string;
}

/** Where the database, the reports and the shipped price book go when the config does not say. */
export function defaultPlaces(env: NodeJS.ProcessEnv = process.env): { db: string; reports: string; prices: string } {
  const root = packageRoot();
  const prices = join(root, 'config', 'prices.toml');
  // A git checkout keeps today's layout beside the code; an installed package must not write there.
  if (existsSync(join(root, '.git')))
    return { db: join(root, 'data', 'usage.duckdb'), reports: join(root, 'reports'), prices };
  const state = join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'usage-pipeline');
  return { db: join(state, 'usage.duckdb'), reports: join(state, 'reports'), prices };
}

/** The config files looked for, in order; the first that exists is read. */
export function configCandidates(opts: LoadConfigOptions = {}): { file: string; explicit: boolean }[] {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  if (opts.path !== undefined) return [{ file: resolve(cwd, opts.path), explicit: opts.explicit ?? true }];
  if (env.USAGE_CONFIG) return [{ file: resolve(cwd, env.USAGE_CONFIG), explicit: true }];
  const xdg = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return [
    { file: resolve(cwd, 'config/usage.toml'), explicit: false },
    { file: join(xdg, 'usage-pipeline', 'usage.toml'), explicit: false },
    { file: join(opts.systemDir ?? '/etc/usage-pipeline', 'usage.toml'), explicit: false },
  ];
}

export function loadConfig(opts: LoadConfigOptions = {}): LoadedConfig {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  let raw: Record<string, unknown> = {};
  let path: string | null = null;
  let text: string | undefined;
  const candidates = configCandidates({ ...opts, cwd, env });
  for (const c of candidates) {
    try {
      text = readFileSync(c.file, 'utf8');
      path = c.file;
      break;
    } catch (err) {
      if (c.explicit || (err as NodeJS.ErrnoException).code !== 'ENOENT') {
        const how =
          opts.path !== undefined
            ? 'Pass --config <file>'
            : env.USAGE_CONFIG && c.explicit
              ? 'Set USAGE_CONFIG to'
              : 'Fix or remove it, or pass --config <file>';
        throw new UsageError(
          `cannot read config file ${c.file}: ${(err as Error).message}. ${how} with a readable TOML file.`,
        );
      }
    }
  }
  const file = path ?? candidates[0]!.file;
  if (text !== undefined) {
    try {
      raw = parseToml(text);
    } catch (err) {
      const detail =
        err instanceof TomlError
          ? `line ${err.line}, column ${err.column}: ${err.message.split('\n')[0]}`
          : (err as Error).message;
      throw new UsageError(`config file ${file} is not valid TOML (${detail}).`);
    }
  }
  const baseDir = path ? dirname(path) : cwd;
  resolvePaths(raw, baseDir);
  applyEnvOverrides(raw, env, cwd);
  applyDefaultPlaces(raw, defaultPlaces(env));
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const where = i.path.length ? i.path.map(String).join('.') : '(top level)';
      const keys = 'keys' in i && Array.isArray(i.keys) ? ` ${i.keys.join(', ')}` : '';
      return `  - ${where}${keys}: ${i.message}`;
    });
    throw new UsageError(`config file ${path ?? file} has ${problems.length} problem(s):\n${problems.join('\n')}`);
  }
  return { config: parsed.data, path, baseDir };
}

/** The config's path-valued keys, by section. */
const PATH_KEYS: [string, string][] = [
  ['store', 'db'],
  ['report', 'out_dir'],
  ['report', 'prices'],
  ['report', 'price_overlay'],
  ['export', 'dataset'],
  ['metrics', 'textfile'],
];

function sectionOf(raw: Record<string, unknown>, name: string): Record<string, unknown> {
  const s = raw[name];
  if (s && typeof s === 'object' && !Array.isArray(s)) return s as Record<string, unknown>;
  const fresh: Record<string, unknown> = {};
  raw[name] = fresh;
  return fresh;
}

/** Relative paths in a config file mean "beside this file", wherever the command runs from. */
function resolvePaths(raw: Record<string, unknown>, baseDir: string): void {
  for (const [section, key] of PATH_KEYS) {
    const s = raw[section];
    if (!s || typeof s !== 'object' || Array.isArray(s)) continue;
    const v = (s as Record<string, unknown>)[key];
    if (typeof v === 'string' && v !== '') (s as Record<string, unknown>)[key] = resolve(baseDir, v);
  }
}

function applyDefaultPlaces(raw: Record<string, unknown>, places: ReturnType<typeof defaultPlaces>): void {
  const store = sectionOf(raw, 'store');
  const report = sectionOf(raw, 'report');
  // A configured database takes the reports with it (beside it), so a service never writes under $HOME.
  report.out_dir ??= typeof store.db === 'string' ? join(dirname(store.db), 'reports') : places.reports;
  store.db ??= places.db;
  report.prices ??= places.prices;
}

function applyEnvOverrides(raw: Record<string, unknown>, env: NodeJS.ProcessEnv, cwd: string): void {
  if (env.USAGE_BASE_URL) sectionOf(raw, 'api').base_url = env.USAGE_BASE_URL;
  if (env.USAGE_DB) sectionOf(raw, 'store').db = resolve(cwd, env.USAGE_DB);
}
