// collectOnce(): one collection with everything wired (client, store, price tables, analyst copy), for the CLI, the
// daemon and the demo. Callers pass typed values; parsing flags is the CLI's job.
import { setTimeout as delay } from 'node:timers/promises';
import { collect, type CollectProgress, type CollectResult } from '../collect/collect.js';
import { planWindow } from '../collect/planner.js';
import type { Granularity, Source } from '../domain/granularity.js';
import { publishAnalystCopy } from '../store/publish.js';
import { refreshPricesIfValid } from '../report/prices.js';
import { apiClient, openCommandStore, priceBookPaths, type CommandContext } from './context.js';

export interface CollectOnceOptions {
  granularities?: readonly Granularity[];
  sources?: readonly Source[];
  orgs?: readonly string[];
  from?: number;
  to?: number;
  baseUrl?: string;
  includePartial?: boolean;
  inventory?: 'auto' | 'always' | 'never';
  now?: () => number;
  progress?: CollectProgress;
  signal?: AbortSignal;
}

/**
 * USAGE_HOLD_PHASE=publishing:MS pauses before that phase for MS milliseconds (ended early by a stop), so an
 * operator can rehearse stopping a collection at that moment and see that it ends cleanly.
 */
async function holdPhase(phase: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<void> {
  const m = /^(\w+):(\d+)$/.exec(env.USAGE_HOLD_PHASE ?? '');
  if (!m || m[1] !== phase) return;
  await delay(Number(m[2]), undefined, signal ? { signal } : undefined).catch(() => {});
}

export type CollectOnceResult = CollectResult & { dbPath: string; analystCopy: string | null };

export async function collectOnce(ctx: CommandContext, opts: CollectOnceOptions = {}): Promise<CollectOnceResult> {
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
  const client = apiClient(ctx, opts.baseUrl ?? ctx.env.USAGE_BASE_URL);
  const store = await openCommandStore(ctx);
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
    });
    let analystCopy: string | null = null;
    // An interrupted run publishes too when it committed anything: analysts see what is there. A stop
    // arriving now does not cut the publishing short: it is quick and leaves a whole copy.
    if (result.status === 'interrupted' ? result.rows > 0 || result.inventoryRequests > 0 : result.rows > 0 || result.status !== 'failed') {
      opts.progress?.onPhase?.('publishing');
      await holdPhase('publishing', ctx.env, opts.signal);
      // The price book and metric catalogue tables follow config/prices.toml (by sha256) before publishing.
      await refreshPricesIfValid(store, priceBookPaths(ctx), ctx.log);
      analystCopy = await publishAnalystCopy(store);
    }
    return { ...result, dbPath: ctx.dbPath, analystCopy };
  } finally {
    await store.close();
    await client.close();
  }
}
