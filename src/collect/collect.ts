// The collector: for each granularity and organization, pages the consumption endpoints and loads
// every value into DuckDB. Each (source, granularity, organization) is one batch, one scope: its pages
// are checked strictly and staged, and the batch's commit replaces the window with them and records
// its coverage row in one transaction. A scope that fails (a malformed page, a cursor that never ends,
// an answer that would delete much of the window) changes nothing but records the failure.
import { randomUUID } from 'node:crypto';
import type { Granularity, Source } from '../domain/granularity.js';
import { PageReader } from '../page/pageReader.js';
import { StoreCorruptError, type Store } from '../store/store.js';
import { Slots } from '../store/slots.js';
import { CollectInterrupted } from './errors.js';
import { fetchV1, runV2 } from './fetchers.js';
import { maybeRefreshInventory } from './inventoryPhase.js';
import { resolveOrgs } from './orgs.js';
import { planWindow, type Window } from './planner.js';
import { runScope, type ScopeContext } from './scope.js';
import { PAGES_IN_HAND } from './stagePage.js';
import type { CollectOptions, CollectResult, ScopeResult } from './types.js';

export type {
  CollectOptions,
  CollectPhase,
  CollectProgress,
  CollectResult,
  ScopeResult,
  ScopeStatus,
} from './types.js';

export async function collect(opts: CollectOptions): Promise<CollectResult> {
  const { config, store, client, log } = opts;
  const now = opts.now ?? Date.now;
  const started = now();
  const startedMono = performance.now(); // the injected clock may be pinned; durations are real
  const runId = `${new Date(started).toISOString().replace(/[-:]/g, '').slice(0, 15)}Z-${randomUUID().slice(0, 8)}`;
  const granularities = opts.granularities ?? config.collect.granularities;
  const sources = new Set<Source>(opts.sources ?? config.collect.sources);
  if (sources.has('v2_frameworks')) sources.add('v2_programs'); // frameworks are asked for the programs v2 returns
  const includePartial = opts.includePartial ?? config.collect.include_partial;
  const startStats = { ...client.stats };
  const scopes: ScopeResult[] = [];
  const counts = { pages: 0, rows: 0 };

  await store.runs.start({
    runId,
    command: 'collect',
    options: {
      granularities,
      sources: [...sources],
      orgs: opts.orgs ?? config.collect.orgs,
      from: opts.from ? new Date(opts.from).toISOString() : null,
      to: opts.to ? new Date(opts.to).toISOString() : null,
      includePartial,
    },
  });

  const checkAbort = () => {
    if (opts.signal?.aborted) throw new CollectInterrupted();
  };
  opts.progress?.attach?.(() => client.stats.requests - startStats.requests);
  const inventory = { requests: 0, remaining: 0 };

  let error: string | undefined;
  let interrupted = false;
  try {
    opts.progress?.onPhase?.('organizations');
    const orgs = await resolveOrgs(opts);
    checkAbort();
    const plannedConsumption = await expectedRequests(
      store,
      granularities.length,
      orgs.length * granularities.length * sources.size,
    );
    opts.progress?.onPlanned?.(plannedConsumption);
    opts.progress?.onPhase?.('consumption', { orgs: orgs.length, granularities, planned_requests: plannedConsumption });

    await collectScopes({ opts, runId, now, granularities, sources, includePartial, scopes, counts, checkAbort }, orgs);
    checkAbort();
    // The consumption of every scope is committed: only now may the inventory spend requests.
    const before = client.stats.requests;
    try {
      await maybeRefreshInventory(
        opts,
        orgs,
        now,
        scopes,
        runId,
        inventory,
        client.stats.requests - startStats.requests,
      );
    } finally {
      inventory.requests = client.stats.requests - before;
    }
  } catch (err) {
    if (err instanceof StoreCorruptError) throw err;
    if (opts.signal?.aborted || err instanceof CollectInterrupted) {
      interrupted = true;
      error = new CollectInterrupted().message;
      log.warn('collection interrupted', { run_id: runId });
    } else {
      error = err instanceof Error ? err.message : String(err);
      log.error('collection failed', { run_id: runId, error });
    }
  }

  return endRun({ opts, runId, startStats, scopes, counts, inventory, startedMono, interrupted, error });
}

/** What the consumption scopes of one run share. */
interface ScopesRun {
  opts: CollectOptions;
  runId: string;
  now: () => number;
  granularities: readonly Granularity[];
  sources: Set<Source>;
  includePartial: boolean;
  scopes: ScopeResult[];
  counts: { pages: number; rows: number };
  checkAbort: () => void;
}

/** Every (source, granularity, organization) scope, planned and run; throws the first that failed to run. */
async function collectScopes(run: ScopesRun, orgs: string[]): Promise<void> {
  const { opts, runId, now, granularities, sources, includePartial, scopes, counts, checkAbort } = run;
  const { config, store } = opts;
  const tasks: Promise<void>[] = [];
  const pagesInHand = new Slots(PAGES_IN_HAND);
  const pageReader = new PageReader();
  for (const g of granularities) {
    for (const org of orgs) {
      const plan = async (source: Source): Promise<Window | null> =>
        planWindow({
          now: now(),
          granularity: g,
          heldEnd:
            opts.from !== undefined || opts.to !== undefined
              ? null
              : toMs(await store.coverage.latestCompleteEnd(source, g, org)),
          settle: config.collect.settle,
          ...(opts.from !== undefined ? { from: opts.from } : {}),
          ...(opts.to !== undefined ? { to: opts.to } : {}),
          includePartial,
        });
      const ctx: ScopeContext = {
        ...opts,
        runId,
        org,
        granularity: g,
        checkAbort,
        pagesInHand,
        pageReader,
        count: (source, n) => {
          counts.pages += 1;
          counts.rows += n;
          opts.progress?.onPage?.(source, n);
        },
      };
      if (sources.has('v1_programs')) {
        tasks.push(plan('v1_programs').then((w) => runScope(ctx, 'v1_programs', w, scopes, fetchV1)));
      }
      if (sources.has('v2_programs')) {
        tasks.push(
          Promise.all([plan('v2_programs'), sources.has('v2_frameworks') ? plan('v2_frameworks') : null]).then(
            ([wp, wf]) => runV2(ctx, widest(wp, wf), sources.has('v2_frameworks'), scopes),
          ),
        );
      }
    }
  }
  const settled = await Promise.allSettled(tasks);
  await pageReader.close();
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
}

/** The run's record in the store and its result. */
async function endRun(r: {
  opts: CollectOptions;
  runId: string;
  startStats: CollectOptions['client']['stats'];
  scopes: ScopeResult[];
  counts: { pages: number; rows: number };
  inventory: { requests: number; remaining: number };
  startedMono: number;
  interrupted: boolean;
  error: string | undefined;
}): Promise<CollectResult> {
  const {
    opts: { client, store },
    runId,
    startStats,
    scopes,
    counts: { pages, rows },
    inventory,
    startedMono,
    interrupted,
    error,
  } = r;
  const st = client.stats;
  const delta = {
    requests: st.requests - startStats.requests,
    retries: st.retries - startStats.retries,
    throttled: st.throttled - startStats.throttled,
  };
  const { status, exitCode } = interrupted
    ? { status: 'interrupted' as const, exitCode: 1 as const }
    : outcome(scopes, error);
  await store.runs.finish({
    runId,
    status,
    ...delta,
    pages,
    rowsLoaded: rows,
    inventoryRequests: inventory.requests,
    ...(error ? { error } : {}),
  });
  return {
    runId,
    status,
    exitCode,
    scopes,
    ...delta,
    pages,
    rows,
    inventoryRequests: inventory.requests,
    inventoryRemaining: inventory.remaining,
    durationMs: Math.round(performance.now() - startedMono),
    ...(error ? { error } : {}),
  };
}

/** Exit 0 when every scope was served or answered not eligible; 2 when some scope failed; 1 when the run
 *  could not proceed at all. An organization not eligible for either API version (a Free plan) is a final,
 *  known answer: complete, with no billable usage. */
function outcome(
  scopes: ScopeResult[],
  error: string | undefined,
): { status: CollectResult['status']; exitCode: 0 | 1 | 2 } {
  const data = scopes.filter((s) => s.source !== 'inventory');
  const anyCollected = data.some((s) => s.status === 'complete' || s.status === 'partial' || s.status === 'up_to_date');
  if (error && !anyCollected) return { status: 'failed', exitCode: 1 };
  if (error || scopes.some((s) => s.status === 'failed')) return { status: 'partial', exitCode: 2 };
  return { status: 'complete', exitCode: 0 };
}

/** For the progress display's ETA: consumption requests do not depend on the window's length, only on how
 *  many programs there are, so the last complete run's, scaled by the granularities asked for, is a good
 *  guess; without one, at least a request per scope. */
async function expectedRequests(store: Store, granularities: number, scopes: number): Promise<number> {
  const last = (await store.runs.last(10)).find(
    (r) => r.command === 'collect' && r.status === 'complete' && r.requests > r.inventoryRequests,
  );
  if (!last?.options) return scopes;
  const before = (JSON.parse(last.options) as { granularities?: unknown[] }).granularities?.length ?? 3;
  return Math.max(scopes, Math.round(((last.requests - last.inventoryRequests) * granularities) / Math.max(1, before)));
}

function toMs(d: Date | null): number | null {
  return d ? d.getTime() : null;
}

function widest(a: Window | null, b: Window | null): Window | null {
  if (!a) return b;
  if (!b) return a;
  return { ...a, from: Math.min(a.from, b.from), to: Math.max(a.to, b.to), partial: a.partial || b.partial };
}
