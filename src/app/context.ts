// What every command needs: the validated config, the database path, a logger, and (for commands
// that call the API) a client built from the config and the key in the environment.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ApiClient } from '../api/client.js';
import { readApiKey } from '../api/credentials.js';
import { RateLimiter } from '../api/limiter.js';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { UsageError } from '../domain/errors.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../log.js';
import { isOutOfMemory, openStore, type Store } from '../store/store.js';

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
  /** Where dbPath came from, for messages: '--db' or 'store.db' (the config, or USAGE_DB). */
  dbSource: '--db' | 'store.db';
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
  return { loaded, config, dbPath, dbSource: opts.db !== undefined ? '--db' : 'store.db', cwd, env, log, resolvePath };
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

/** A DuckDB memory limit and the config key it comes from (named when DuckDB runs out). */
export interface MemoryLimit {
  key: 'store.memory_limit' | 'collect.memory_limit';
  value: string;
}

const storeMemoryLimit = (ctx: CommandContext): MemoryLimit => ({
  key: 'store.memory_limit',
  value: ctx.config.store.memory_limit,
});
export const collectMemoryLimit = (ctx: CommandContext): MemoryLimit => ({
  key: 'collect.memory_limit',
  value: ctx.config.collect.memory_limit,
});

/** The command's database, with the configured lock wait and memory limit (store.memory_limit unless given). */
export async function openCommandStore(
  ctx: CommandContext,
  log: Logger = ctx.log,
  o: {
    create?: boolean;
    signal?: AbortSignal;
    threads?: number;
    memoryLimit?: MemoryLimit;
    checkpointThreshold?: string;
  } = {},
): Promise<Store> {
  const { key, value: limit } = o.memoryLimit ?? storeMemoryLimit(ctx);
  return openStore({
    path: ctx.dbPath,
    ...(o.threads !== undefined ? { threads: o.threads } : {}),
    ...(o.checkpointThreshold !== undefined ? { checkpointThreshold: o.checkpointThreshold } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.create === false ? { create: false } : {}),
    lockTimeoutMs: ctx.config.store.lock_timeout_seconds * 1000,
    memoryLimit: limit,
    log,
  }).catch((err: unknown) => {
    // Opening (or upgrading) the file ran out of memory: nothing was changed (each migration is one transaction).
    if (!isOutOfMemory(err)) throw err;
    throw new Error(
      `the database ran out of memory while opening (${key} = ${limit}): ${(err as Error).message.split('\n')[0]}. ` +
        `It was not changed; raise ${key} in the config and run again.`,
    );
  });
}

/**
 * A folder to write in, or the nearest folder above it that exists, must be a folder this process can
 * write: refused now, naming the errno and the path, rather than after the report was computed.
 */
export function checkWritableDir(flag: string, dir: string): void {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    if (!statSync(at).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(at, constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`${flag} ${dir}: cannot write under ${at} (${code}); choose a folder this user can write.`);
  }
}

export interface ClientSettings {
  baseUrl: string;
  apiKey: string;
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * The base URL as the API documents it: http(s), with its version segment (/v1), and https unless the
 * host is this machine. Plain http elsewhere would carry the key in clear text: refused unless the
 * operator says --insecure-http, and then said aloud. Pure: nothing is opened or sent.
 */
export function checkBaseUrl(raw: string, o: { insecureHttp?: boolean; warn: (msg: string) => void }): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(
      `--base-url "${raw}" is not a URL: give the API root with its version, e.g. https://api.example.com/v1.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UsageError(
      `--base-url "${raw}": the scheme ${url.protocol} is not served; use https:// (or http:// on this machine's loopback).`,
    );
  }
  if (url.username || url.password) {
    throw new UsageError(
      '--base-url carries a user name or password; the key comes from USAGE_API_KEY or USAGE_API_KEY_FILE only.',
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  if (!/\/v\d+$/.test(path)) {
    throw new UsageError(
      `--base-url "${raw}" has no version segment: give the API root including it, e.g. ${url.origin}${path}/v1.`,
    );
  }
  if (url.search || url.hash)
    throw new UsageError(`--base-url "${raw}" carries a query or fragment; give the API root only.`);
  if (url.protocol === 'http:' && !LOOPBACK_HOST.test(url.hostname)) {
    if (!o.insecureHttp) {
      throw new UsageError(
        `--base-url "${raw}" is plain http to another host: the API key would travel in clear text. Use https://, ` +
          `or pass --insecure-http if this network is trusted.`,
      );
    }
    o.warn(`--insecure-http: the API key is sent in clear text to ${url.host}`);
  }
  return `${url.origin}${path}`;
}

/** Everything a client needs, checked (URL, key) without opening anything: call before any side effect. */
export function clientSettings(ctx: CommandContext, baseUrl?: string, insecureHttp?: boolean): ClientSettings {
  const raw = baseUrl ?? ctx.config.api.base_url;
  if (raw === undefined) {
    // Never a default address: a forgotten setting would reach nothing, or a sandbox's fake data.
    const where = ctx.loaded.path ? `in ${ctx.loaded.path}` : 'in the config (none was found)';
    throw new UsageError(
      `no API base URL: set USAGE_BASE_URL or [api] base_url ${where} to the API root including /v1 ` +
        `(e.g. https://api.example.com/v1), or pass --base-url.`,
    );
  }
  const url = checkBaseUrl(raw, { ...(insecureHttp ? { insecureHttp } : {}), warn: (msg) => ctx.log.warn(msg) });
  let apiKey: string;
  try {
    apiKey = readApiKey(ctx.env, { warn: (msg) => ctx.log.warn(msg) });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return { baseUrl: url, apiKey };
}

export function apiClient(ctx: CommandContext, settings: ClientSettings, signal?: AbortSignal): ApiClient {
  const api = ctx.config.api;
  const rl = api.rate_limit;
  const maxRetryDelayMs = api.max_retry_after_seconds * 1000;
  const limiter = new RateLimiter({
    perMinute: rl.per_minute,
    perSecondPerRoute: rl.per_second_per_route,
    headroom: rl.headroom,
    maxPauseMs: maxRetryDelayMs,
  });
  return new ApiClient({
    baseUrl: settings.baseUrl,
    apiKey: settings.apiKey,
    limiter,
    concurrency: api.concurrency,
    timeoutMs: api.timeout_ms,
    maxRetries: api.max_retries,
    maxRetryDelayMs,
    maxBodyBytes: api.max_body_mb * 1024 * 1024,
    log: ctx.log,
    ...(signal ? { signal } : {}),
  });
}
