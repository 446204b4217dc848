// collectOnce(): one collection with everything wired (client, store, price tables, analyst copy), for the CLI, the
// daemon and the demo. Callers pass typed values; parsing flags is the CLI's job. prepareCollect() checks
// everything a collection can refuse with no side effect, so the CLI runs it before taking the run lock.
import { dirname } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { ApiClient } from '../api/client.js';
import { collect, type CollectProgress, type CollectResult } from '../collect/collect.js';
import { outOfMemoryMessage } from '../collect/errors.js';
import { planWindow } from '../collect/planner.js';
import type { Granularity, Source } from '../domain/granularity.js';
import { publishAnalystCopy } from '../store/publish.js';
import { isOutOfMemory, isStoreCorruption, StoreCorruptError, type Store } from '../store/store.js';
import { refreshPricesIfValid } from '../report/prices.js';
import { alertsAfterCollect, type AlertsRunSummary } from './alerts.js';
import {
  apiClient,
  checkWritableDir,
  clientSettings,
  collectMemoryLimit,
  openCommandStore,
  priceBookPaths,
  type ClientSettings,
  type CommandContext,
} from './context.js';

/** DuckDB's threads while collecting: a batch's statements are small, and one thread spends about a third
 *  less CPU on them than two (BENCHMARKS.md, "DuckDB on one thread while collecting (2026-11-23)"), for the same wall time under the API's
 *  rate limit. */
const COLLECT_THREADS = 1;

/** DuckDB's checkpoint_threshold while collecting. The collect checkpoints once its scopes are committed
 *  (checkpointAndAlerts); at DuckDB's default of 16MB, one of the scopes' commits (an hourly run's commits log
 *  about 40 MB for one organization of the benchmark's `large`) checkpointed as well, and a checkpoint
 *  rewrites the metadata and merges the deleted rows of the bucket tables, which costs more as they grow: at
 *  a year of history that second checkpoint took 1.9-8.0 CPU-s and wrote 59-74 MB (BENCHMARKS.md, "One
 *  checkpoint per hourly collect (2026-11-29)"). Four times the default leaves an hourly run's scopes to the one
 *  checkpoint and still bounds the log of a catch-up run. */
export const COLLECT_CHECKPOINT_THRESHOLD = '64MB';

export interface CollectOnceOptions {
  granularities?: readonly Granularity[];
  sources?: readonly Source[];
  orgs?: readonly string[];
  from?: number;
  to?: number;
  baseUrl?: string;
  /** Allow a plain-http base URL beyond loopback (the key then travels in clear text; a warning says so). */
  insecureHttp?: boolean;
  includePartial?: boolean;
  inventory?: 'auto' | 'always' | 'never';
  /** Commit answers that would delete more than collect.max_deletion_share of a window's rows. */
  acceptDeletions?: boolean;
  now?: () => number;
  progress?: CollectProgress;
  signal?: AbortSignal;
}

/**
 * USAGE_HOLD_PHASE=<phase>:MS (alerts or publishing) pauses before that phase for MS milliseconds (ended
 * early by a stop), so an operator can rehearse stopping a collection at that moment and see that it ends cleanly.
 */
async function holdPhase(phase: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  const m = /^(\w+):(\d+)$/.exec(env.USAGE_HOLD_PHASE ?? '');
  if (!m || m[1] !== phase) return;
  await delay(Number(m[2]), undefined, signal ? { signal } : undefined).catch(() => {
    // a stop during the test hold ends the hold; the caller sees the signal itself
  });
}

export type CollectOnceResult = CollectResult & {
  dbPath: string;
  analystCopy: string | null;
  alerts: AlertsRunSummary | null;
};

/** Whether a collect's publish may seal an hourly month of the analyst copy: not in a run collecting hours
 *  alone (the hourly job, whose bytes written stay those of its window) unless the configuration collects
 *  nothing else, so that a month is sealed by the daily job. */
export function sealsMonth(ctx: CommandContext, opts: Pick<CollectOnceOptions, 'granularities'>): boolean {
  const beyondHours = (gs: readonly Granularity[]) => gs.some((g) => g !== 'hourly');
  return (
    beyondHours(opts.granularities ?? ctx.config.collect.granularities) ||
    !beyondHours(ctx.config.collect.granularities)
  );
}

/** What prepareCollect() checked: the client's settings (URL and key). */
export interface PreparedCollect {
  settings: ClientSettings;
}

/**
 * Everything a collection can refuse (the range against the look-back, the base URL, the key, a database
 * folder this user cannot write), checked with no side effect: no lock, no folder, no database, no request.
 */
export function prepareCollect(ctx: CommandContext, opts: CollectOnceOptions = {}): PreparedCollect {
  // An explicit range beyond a granularity's look-back is refused now, before any request is sent.
  if (opts.from !== undefined || opts.to !== undefined) {
    const now = (opts.now ?? Date.now)();
    for (const granularity of opts.granularities ?? ctx.config.collect.granularities) {
      planWindow({
        now,
        granularity,
        heldEnd: null,
        settle: ctx.config.collect.settle,
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(opts.to !== undefined ? { to: opts.to } : {}),
      });
    }
  }
  const settings = clientSettings(ctx, opts.baseUrl ?? ctx.env.USAGE_BASE_URL, opts.insecureHttp);
  checkWritableDir(ctx.dbSource, dirname(ctx.dbPath));
  return { settings };
}

/**
 * Once the scopes are committed: the run's commits go into the file, at collect.memory_limit (left to
 * DuckDB's own checkpoint, the alerts' commit at the lower alerts.memory_limit wrote them and spilled to
 * <db>.tmp/: BENCHMARKS.md, "The collect's checkpoint at its own memory limit"); then the alerts on what
 * the run changed (never failing it), before publishing so the copy holds them.
 */
async function checkpointAndAlerts(
  ctx: CommandContext,
  store: Store,
  client: ApiClient,
  result: CollectResult,
  opts: CollectOnceOptions,
): Promise<AlertsRunSummary | null> {
  if (result.rows > 0) {
    opts.progress?.onPhase?.('checkpoint');
    await store.checkpoint();
  }
  if (opts.signal?.aborted || !ctx.config.alerts.enabled) return null;
  opts.progress?.onPhase?.('alerts');
  await holdPhase('alerts', ctx.env, opts.signal);
  if (opts.signal?.aborted) return null;
  return alertsAfterCollect(ctx, store, client, result, {
    now: (opts.now ?? Date.now)(),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
}

export async function collectOnce(
  ctx: CommandContext,
  opts: CollectOnceOptions = {},
  prepared: PreparedCollect = prepareCollect(ctx, opts),
): Promise<CollectOnceResult> {
  const client = apiClient(ctx, prepared.settings, opts.signal);
  try {
    const memory = collectMemoryLimit(ctx);
    const store = await openCommandStore(ctx, ctx.log, {
      threads: COLLECT_THREADS,
      memoryLimit: memory,
      checkpointThreshold: COLLECT_CHECKPOINT_THRESHOLD,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    try {
      const result = await collect({
        config: ctx.config,
        store,
        client,
        log: ctx.log,
        ...(opts.now ? { now: opts.now } : {}),
        ...(opts.granularities ? { granularities: opts.granularities } : {}),
        ...(opts.sources ? { sources: opts.sources } : {}),
        ...(opts.orgs ? { orgs: opts.orgs } : {}),
        ...(opts.from !== undefined ? { from: opts.from } : {}),
        ...(opts.to !== undefined ? { to: opts.to } : {}),
        ...(opts.includePartial !== undefined ? { includePartial: opts.includePartial } : {}),
        ...(opts.inventory ? { inventory: opts.inventory } : {}),
        ...(opts.progress ? { progress: opts.progress } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.acceptDeletions ? { acceptDeletions: true } : {}),
      });
      const alerts = await checkpointAndAlerts(ctx, store, client, result, opts);
      let analystCopy: string | null = null;
      // An interrupted run publishes too when it committed anything: analysts see what is there. A stop
      // arriving now does not cut the publishing short: it is quick and leaves a whole copy.
      if (
        result.status === 'interrupted'
          ? result.rows > 0 || result.inventoryRequests > 0
          : result.rows > 0 || result.status !== 'failed'
      ) {
        opts.progress?.onPhase?.('publishing');
        await holdPhase('publishing', ctx.env, opts.signal);
        // The price book and metric catalogue tables follow config/prices.toml (by sha256) before publishing.
        await refreshPricesIfValid(store, priceBookPaths(ctx), ctx.log);
        analystCopy = await publishAnalystCopy(store, { sealMonth: sealsMonth(ctx, opts) });
      }
      return { ...result, dbPath: ctx.dbPath, analystCopy, alerts };
    } catch (err) {
      // DuckDB reads blocks lazily: a damaged file can open and fail at its first read. Never published.
      if (isStoreCorruption(err) && !(err instanceof StoreCorruptError)) {
        throw new StoreCorruptError(ctx.dbPath, (err as Error).message.split('\n')[0] ?? '');
      }
      // Out of DuckDB memory outside a scope (recording the run, publishing): what was committed stays.
      if (isOutOfMemory(err)) {
        throw new Error(
          outOfMemoryMessage(memory, err, 'Committed scopes are kept, the one in progress was rolled back'),
          {
            cause: err,
          },
        );
      }
      throw err;
    } finally {
      await store.close();
    }
  } finally {
    await client.close();
  }
}
