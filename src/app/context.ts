// What every command needs: the validated config, the database path, a logger, and (for commands
// that call the API) a client built from the config and the key in the environment.
import { resolve } from 'node:path';
import { ApiClient } from '../api/client.js';
import { readApiKey } from '../api/credentials.js';
import { RateLimiter } from '../api/limiter.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { UsageError } from '../domain/errors.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../log.js';
import { openStore, type Store } from '../store/store.js';

export interface CommonOptions {
  config?: string;
  db?: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  log?: Logger;
}

export interface CommandContext {
  loaded: LoadedConfig;
  config: Config;
  dbPath: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  log: Logger;
  /** A path from the config, against the config file's folder (the loaded config's paths are already absolute). */
  resolvePath(p: string): string;
}

export function commandContext(opts: CommonOptions): CommandContext {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const loaded = loadConfig({ ...(opts.config !== undefined ? { path: opts.config, explicit: true } : {}), cwd, env });
  const config = loaded.config;
  const log = opts.log ?? createLogger({ level: config.log.level });
  const resolvePath = (p: string) => resolve(loaded.baseDir, p);
  const dbPath = resolve(cwd, opts.db ?? config.store.db);
  return { loaded, config, dbPath, cwd, env, log, resolvePath };
}

/**
 * The price book to load: a path the caller gave (against the working directory, like every flag) or the
 * configured one, with the configured overlay (`report.price_overlay`, an operator's own rates) laid over it.
 */
export function priceBookPaths(ctx: CommandContext, prices?: string): { path: string; overlay?: string } {
  const overlay = ctx.config.report.price_overlay;
  return {
    path: prices !== undefined ? resolve(ctx.cwd, prices) : ctx.resolvePath(ctx.config.report.prices),
    ...(overlay ? { overlay: ctx.resolvePath(overlay) } : {}),
  };
}

/** The command's database, with the configured lock wait and memory limit. */
export function openCommandStore(ctx: CommandContext, log: Logger = ctx.log): Promise<Store> {
  return openStore({
    path: ctx.dbPath,
    lockTimeoutMs: ctx.config.store.lock_timeout_seconds * 1000,
    memoryLimit: ctx.config.store.memory_limit,
    log,
  });
}

export function apiClient(ctx: CommandContext, baseUrl?: string): ApiClient {
  const url = baseUrl ?? ctx.config.api.base_url;
  try {
    // eslint-disable-next-line no-new
    new URL(url);
  } catch {
    throw new UsageError(`--base-url "${url}" is not a URL: give the API root with its version, e.g. http://127.0.0.1:4010/v1.`);
  }
  let apiKey: string;
  try {
    apiKey = readApiKey(ctx.env, { warn: (msg) => ctx.log.warn(msg) });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const rl = ctx.config.api.rate_limit;
  const limiter = new RateLimiter({ perMinute: rl.per_minute, perSecondPerRoute: rl.per_second_per_route, headroom: rl.headroom });
  return new ApiClient({
    baseUrl: url.replace(/\/+$/, ''),
    apiKey,
    limiter,
    concurrency: ctx.config.api.concurrency,
    timeoutMs: ctx.config.api.timeout_ms,
    maxRetries: ctx.config.api.max_retries,
    log: ctx.log,
  });
}
