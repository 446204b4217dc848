// `usage-pipeline collect`: parse nothing here (main.ts does), run one collection, publish the analyst copy.
import { dirname } from 'node:path';
import { GRANULARITIES, SOURCES, type Granularity, type Source } from '../api/spec.js';
import { collect, type CollectProgress, type CollectResult } from '../collect/collect.js';
import { parseIsoFlag, planWindow } from '../collect/planner.js';
import { UsageError } from '../config/load.js';
import { publishAnalystCopy } from '../store/publish.js';
import { isStoreCorruption, StoreCorruptError } from '../store/store.js';
import { apiClient, checkWritableDir, clientSettings, commandContext, openCommandStore, type CommonOptions } from './context.js';

export interface CollectCommandOptions extends CommonOptions {
  from?: string;
  to?: string;
  granularity?: string;
  sources?: string;
  baseUrl?: string;
  orgs?: string;
  includePartial?: boolean;
  inventory?: 'auto' | 'always' | 'never';
  acceptDeletions?: boolean;
  insecureHttp?: boolean;
  now?: () => number;
  progress?: CollectProgress;
  signal?: AbortSignal;
}

export function parseList<T extends string>(flag: string, value: string, allowed: readonly T[]): T[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = items.filter((i) => !allowed.includes(i as T));
  if (!items.length || bad.length) {
    throw new UsageError(`${flag} "${value}": ${bad.length ? `unknown value ${bad.map((b) => `"${b}"`).join(', ')}` : 'empty'}; allowed: ${allowed.join(', ')} (comma-separated).`);
  }
  return [...new Set(items)] as T[];
}

/** Everything that can be refused is checked here, before a single request is sent. */
export function validateCollectFlags(opts: CollectCommandOptions) {
  const from = opts.from !== undefined ? parseIsoFlag('--from', opts.from) : undefined;
  const to = opts.to !== undefined ? parseIsoFlag('--to', opts.to) : undefined;
  if (from !== undefined && to !== undefined && to <= from) {
    throw new UsageError(`--to ${opts.to} is not after --from ${opts.from}: the range is half-open [from, to).`);
  }
  const granularities = opts.granularity !== undefined ? parseList<Granularity>('--granularity', opts.granularity, GRANULARITIES) : undefined;
  const sources = opts.sources !== undefined ? parseList<Source>('--sources', opts.sources, SOURCES) : undefined;
  const orgs = opts.orgs !== undefined ? opts.orgs.split(',').map((s) => s.trim()).filter(Boolean) : undefined;
  if (orgs !== undefined && !orgs.length) throw new UsageError('--orgs is empty: give organization ids, comma-separated.');
  return { from, to, granularities, sources, orgs };
}

export type PreparedCollect = ReturnType<typeof prepareCollect>;

/**
 * Everything a collect can refuse (flags, dates, base URL, key), checked with no side effect: no lock,
 * no folder, no database, no request. The CLI calls this before it takes the run lock.
 */
export function prepareCollect(opts: CollectCommandOptions) {
  const ctx = commandContext(opts);
  const flags = validateCollectFlags(opts);
  // An explicit range beyond a granularity's look-back is refused now, before any request is sent.
  if (flags.from !== undefined || flags.to !== undefined) {
    const now = (opts.now ?? Date.now)();
    for (const granularity of flags.granularities ?? ctx.config.collect.granularities) {
      planWindow({ now, granularity, heldEnd: null, settle: ctx.config.collect.settle, ...pick(flags) });
    }
  }
  const settings = clientSettings(ctx, opts.baseUrl ?? ctx.env.USAGE_BASE_URL, opts.insecureHttp);
  checkWritableDir(opts.db !== undefined ? '--db' : 'store.db', dirname(ctx.dbPath));
  return { opts, ctx, flags, settings };
}

export async function collectCommand(
  opts: CollectCommandOptions,
  prepared: PreparedCollect = prepareCollect(opts),
): Promise<CollectResult & { dbPath: string; analystCopy: string | null }> {
  const { ctx, flags, settings } = prepared;
  const client = apiClient(ctx, settings, opts.signal);
  const store = await openCommandStore(ctx, ctx.log, opts.signal ? { signal: opts.signal } : {});
  try {
    const result = await collect({
      config: ctx.config,
      store,
      client,
      log: ctx.log,
      ...(opts.now ? { now: opts.now } : {}),
      ...(flags.granularities ? { granularities: flags.granularities } : {}),
      ...(flags.sources ? { sources: flags.sources } : {}),
      ...(flags.orgs ? { orgs: flags.orgs } : {}),
      ...(flags.from !== undefined ? { from: flags.from } : {}),
      ...(flags.to !== undefined ? { to: flags.to } : {}),
      ...(opts.includePartial !== undefined ? { includePartial: opts.includePartial } : {}),
      ...(opts.inventory ? { inventory: opts.inventory } : {}),
      ...(opts.progress ? { progress: opts.progress } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.acceptDeletions ? { acceptDeletions: true } : {}),
    });
    let analystCopy: string | null = null;
    // A stopped run exits promptly; the next run publishes.
    if (!opts.signal?.aborted && (result.rows > 0 || result.status !== 'failed')) analystCopy = await publishAnalystCopy(store);
    return { ...result, dbPath: ctx.dbPath, analystCopy };
  } catch (err) {
    // DuckDB reads blocks lazily: a damaged file can open and fail at its first read. Never published.
    if (isStoreCorruption(err) && !(err instanceof StoreCorruptError)) throw new StoreCorruptError(ctx.dbPath, (err as Error).message.split('\n')[0] ?? '');
    throw err;
  } finally {
    await store.close();
    await client.close();
  }
}

function pick(flags: { from?: number | undefined; to?: number | undefined }): { from?: number; to?: number } {
  return { ...(flags.from !== undefined ? { from: flags.from } : {}), ...(flags.to !== undefined ? { to: flags.to } : {}) };
}
