// The collector: for each granularity and organization, pages the consumption endpoints and loads
// every value into DuckDB. Each (source, granularity, organization) is one batch, one scope: its pages
// are checked strictly and staged, and the batch's commit replaces the window with them and records
// its coverage row in one transaction. A scope that fails (a malformed page, a cursor that never ends,
// an answer that would delete much of the window) changes nothing but records the failure.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { ApiClient } from '../api/client.js';
import { ApiError, ResponseFormatError } from '../api/errors.js';
import { CONSUMPTION_PATHS, MAX_PROGRAM_IDS, PAGE_SIZE, V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { type Granularity, type Source } from '../domain/granularity.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { isOutOfMemory, isStoreCorruption, PageContentError, StoreCorruptError, type Store, type UsageBatch } from '../store/store.js';
import type { PageSource } from '../store/types.js';
import { readSql } from '../store/sql.js';
import { refreshInventory } from './inventory.js';
import { nextBatchSize } from './frameworkBatches.js';
import { cursorPages } from './pagers.js';
import { planWindow, type Window } from './planner.js';

export type ScopeStatus = 'complete' | 'partial' | 'not_eligible' | 'failed' | 'up_to_date';

export interface ScopeResult {
  source: Source | 'inventory';
  granularity: Granularity | null;
  scope: string;
  from: string | null;
  to: string | null;
  status: ScopeStatus;
  rows: number;
  detail?: string;
}

/** What a collection is doing, in order: consumption is committed before the inventory starts. */
export type CollectPhase = 'organizations' | 'consumption' | 'inventory' | 'publishing';

export interface CollectProgress {
  onPage(source: Source, rows: number): void;
  /** Requests the run expects to send in all (grows as the plan becomes known). */
  onPlanned(requests: number): void;
  onPhase?(phase: CollectPhase, detail?: Record<string, unknown>): void;
  /** How to read the requests sent so far; called once when the run starts. */
  attach?(requestsDone: () => number): void;
}

export interface CollectOptions {
  config: Config;
  store: Store;
  client: ApiClient;
  log: Logger;
  now?: () => number;
  granularities?: readonly Granularity[];
  sources?: readonly Source[];
  orgs?: readonly string[];
  from?: number;
  to?: number;
  includePartial?: boolean;
  inventory?: 'auto' | 'always' | 'never';
  progress?: CollectProgress;
  signal?: AbortSignal;
  /** Commit answers that delete more than collect.max_deletion_share of a window's rows. */
  acceptDeletions?: boolean;
}

export interface CollectResult {
  runId: string;
  status: 'complete' | 'partial' | 'failed' | 'interrupted';
  exitCode: 0 | 1 | 2;
  scopes: ScopeResult[];
  requests: number;
  retries: number;
  throttled: number;
  pages: number;
  rows: number;
  /** Requests spent on the inventory (already counted in `requests`). */
  inventoryRequests: number;
  /** Listings the inventory left for a later run (its budget ran out); 0 when it is up to date. */
  inventoryRemaining: number;
  durationMs: number;
  error?: string;
}

/** The key or the org is wrong for every request: stop the whole run rather than fail scope by scope. */
class FatalCollectError extends Error {}

export class CollectInterrupted extends Error {
  constructor() {
    super('collection interrupted; committed batches are kept, the one in progress was rolled back');
  }
}

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
  let pages = 0;
  let rows = 0;

  await store.startRun({
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
    const plannedConsumption = await expectedRequests(store, granularities.length, orgs.length * granularities.length * sources.size);
    opts.progress?.onPlanned(plannedConsumption);
    opts.progress?.onPhase?.('consumption', { orgs: orgs.length, granularities, planned_requests: plannedConsumption });

    const tasks: Promise<void>[] = [];
    for (const g of granularities) {
      for (const org of orgs) {
        const plan = async (source: Source): Promise<Window | null> =>
          planWindow({
            now: now(),
            granularity: g,
            heldEnd: opts.from !== undefined || opts.to !== undefined ? null : toMs(await store.latestCompleteEnd(source, g, org)),
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
          count: (source, n) => {
            pages += 1;
            rows += n;
            opts.progress?.onPage(source, n);
          },
        };
        if (sources.has('v1_programs')) {
          tasks.push(plan('v1_programs').then((w) => runScope(ctx, 'v1_programs', w, scopes, fetchV1)));
        }
        if (sources.has('v2_programs')) {
          tasks.push(
            Promise.all([plan('v2_programs'), sources.has('v2_frameworks') ? plan('v2_frameworks') : null]).then(([wp, wf]) =>
              runV2(ctx, widest(wp, wf), sources.has('v2_frameworks'), scopes),
            ),
          );
        }
      }
    }
    const settled = await Promise.allSettled(tasks);
    for (const s of settled) if (s.status === 'rejected') throw s.reason;
    checkAbort();
    // The consumption of every scope is committed: only now may the inventory spend requests.
    const before = client.stats.requests;
    try {
      await maybeRefreshInventory(opts, orgs, now, scopes, runId, inventory, client.stats.requests - startStats.requests);
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

  const st = client.stats;
  const delta = {
    requests: st.requests - startStats.requests,
    retries: st.retries - startStats.retries,
    throttled: st.throttled - startStats.throttled,
  };
  const { status, exitCode } = interrupted ? { status: 'interrupted' as const, exitCode: 1 as const } : outcome(scopes, error);
  await store.finishRun({ runId, status, ...delta, pages, rowsLoaded: rows, inventoryRequests: inventory.requests, ...(error ? { error } : {}) });
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

/** Exit 0 when every organization was served by the API version its plan allows; 2 when some scope failed
 *  or an organization was eligible for neither version; 1 when the run could not proceed at all. */
function outcome(scopes: ScopeResult[], error: string | undefined): { status: CollectResult['status']; exitCode: 0 | 1 | 2 } {
  const data = scopes.filter((s) => s.source !== 'inventory');
  const anyCollected = data.some((s) => s.status === 'complete' || s.status === 'partial' || s.status === 'up_to_date');
  if (error && !anyCollected) return { status: 'failed', exitCode: 1 };
  const failed = scopes.some((s) => s.status === 'failed');
  const orgs = new Set(data.map((s) => s.scope));
  const unserved = [...orgs].some((org) => data.filter((s) => s.scope === org).every((s) => s.status === 'not_eligible'));
  if (error || failed || unserved) return { status: 'partial', exitCode: 2 };
  return { status: 'complete', exitCode: 0 };
}

/** For the progress display's ETA: consumption requests do not depend on the window's length, only on how
 *  many programs there are, so the last complete run's, scaled by the granularities asked for, is a good
 *  guess; without one, at least a request per scope. */
async function expectedRequests(store: Store, granularities: number, scopes: number): Promise<number> {
  const last = (await store.lastRuns(10)).find((r) => r.command === 'collect' && r.status === 'complete' && r.requests > r.inventoryRequests);
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

async function resolveOrgs(opts: CollectOptions): Promise<string[]> {
  const given = opts.orgs?.length ? opts.orgs : opts.config.collect.orgs;
  if (given.length) return [...given];
  try {
    const { body } = await opts.client.getJson<{ organizations?: { id?: unknown; name?: unknown }[] }>('/users/me/organizations', {}, opts.signal ? { signal: opts.signal } : {});
    const orgs = (body.organizations ?? []).filter((o): o is { id: string; name?: unknown } => typeof o.id === 'string');
    if (!orgs.length) throw new FatalCollectError('the API key belongs to no organization; set collect.orgs in the config or pass --orgs.');
    // Their names name the billing accounts of the reports (FOCUS BillingAccountName).
    const seenAt = new Date((opts.now ?? Date.now)());
    for (const o of orgs) {
      await opts.store.run(readSql('src/store/sql/organizations_upsert.sql'), { org_id: o.id, name: typeof o.name === 'string' && o.name !== '' ? o.name : null, seen_at: seenAt });
    }
    return orgs.map((o) => o.id).sort();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) throw fatal401(err);
    if (err instanceof ApiError && err.status === 404) {
      throw new FatalCollectError(
        `this key cannot list organizations (404, request id ${err.requestId}); an organization or program key must name its organization: set collect.orgs in the config or pass --orgs.`,
      );
    }
    throw err;
  }
}

function fatal401(err: ApiError): FatalCollectError {
  return new FatalCollectError(
    `the API refused the key (401, request id ${err.requestId}): check USAGE_API_KEY or USAGE_API_KEY_FILE; a revoked key must be replaced.`,
  );
}

/** After a stop, requests already sent get this long to answer, so that what arrived is committed. */
export const INVENTORY_GRACE_MS = 2_000;

async function maybeRefreshInventory(
  opts: CollectOptions,
  orgs: string[],
  now: () => number,
  scopes: ScopeResult[],
  runId: string,
  acc: { remaining: number },
  consumptionRequests: number,
) {
  const mode = opts.inventory ?? 'auto';
  if (mode === 'never') return;
  const rl = opts.config.api.rate_limit;
  const budget = Math.floor(opts.config.inventory.max_request_share * rl.per_minute * 60);
  opts.progress?.onPhase?.('inventory', { budget_requests: budget });
  const onPlanned = (n: number) => opts.progress?.onPlanned(consumptionRequests + n);
  // A stop ends waits at once, but the inventory's requests already sent may answer for a moment longer.
  let grace: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  if (opts.signal) {
    grace = new AbortController();
    // Every queued inventory request listens on it (as on the stop signal, see ApiClient): not a leak.
    setMaxListeners(0, grace.signal);
    const g = grace;
    const onStop = () => {
      timer = setTimeout(() => g.abort(opts.signal?.reason), INVENTORY_GRACE_MS);
      timer.unref();
    };
    if (opts.signal.aborted) onStop();
    else opts.signal.addEventListener('abort', onStop, { once: true });
  }
  try {
    const r = await refreshInventory({
      client: opts.client,
      store: opts.store,
      orgs,
      runId,
      now,
      log: opts.log,
      maxAgeHours: opts.config.inventory.max_age_hours,
      budget,
      // Refreshing what is known takes a small share of this run's own consumption requests (at least one).
      refreshBudget: Math.min(budget, Math.max(1, Math.floor(opts.config.inventory.refresh_share * consumptionRequests))),
      force: mode === 'always',
      ...(opts.signal ? { stop: opts.signal } : {}),
      ...(grace ? { inflight: grace.signal } : {}),
      onPlanned,
    });
    acc.remaining = r.remaining;
    if (r.remaining > 0) {
      opts.log.info('inventory budget reached; the next run goes on where this one stopped', { remaining_listings: r.remaining, budget_requests: budget });
    }
    scopes.push({ source: 'inventory', granularity: null, scope: 'all', from: null, to: null, status: 'complete', rows: r.programs + r.frameworks + r.snapshots });
  } catch (err) {
    if (opts.signal?.aborted) throw new CollectInterrupted();
    if (err instanceof ApiError && err.status === 401) throw fatal401(err);
    const detail = err instanceof Error ? err.message : String(err);
    opts.log.warn('inventory refresh failed; consumption is collected anyway', { error: detail });
    scopes.push({ source: 'inventory', granularity: null, scope: 'all', from: null, to: null, status: 'failed', rows: 0, detail });
  } finally {
    if (timer) clearTimeout(timer);
  }
}

interface ScopeContext extends CollectOptions {
  runId: string;
  org: string;
  granularity: Granularity;
  checkAbort: () => void;
  count: (source: Source, rows: number) => void;
}

/**
 * Fetches one consumption page as text and stages it in the batch, where DuckDB's JSON reader parses
 * it. A body DuckDB cannot read as the documented shape is the API answering nonsense: reported with
 * the request id, and the batch is not committed.
 */
async function stagePage(
  ctx: ScopeContext,
  batch: UsageBatch,
  source: PageSource,
  what: string,
  query: Record<string, string | number | readonly string[] | undefined>,
) {
  const res = await ctx.client.getText(CONSUMPTION_PATHS[source], query, ctx.signal ? { signal: ctx.signal } : {});
  ctx.checkAbort();
  try {
    const loaded = await batch.appendPage(source, res.text);
    ctx.count(source, loaded.rows);
    return { ...loaded, requestId: res.requestId };
  } catch (err) {
    if (err instanceof PageContentError) {
      throw new ResponseFormatError(
        `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): a "${leafName(err.offence.path)}" ` +
          `is missing or not of the documented type at ${err.offence.path}: ${err.offence.problem}. Nothing of this scope was changed; re-run later, and if it persists report the request id.`,
        res.requestId,
        res.path,
      );
    }
    const raw = (err as Error).message.split('\n')[0] ?? '';
    // Only what the page's content causes is the API's fault; anything else (memory, disk) is ours.
    if (!/^(Conversion|Constraint|Invalid Input) Error/.test(raw)) throw err;
    const missing = /NOT NULL constraint failed: staging_usage\.(\w+)/.exec(raw)?.[1];
    const why = missing ? `a "${missing}" is missing or not of the documented type` : raw;
    throw new ResponseFormatError(
      `${what}: the answer is not the documented ${source} page (request id ${res.requestId}): ${why}`,
      res.requestId,
      res.path,
    );
  }
}

/** The key a JSON path ends in: `$.programs[1].periods[0].period_start` -> period_start. */
function leafName(path: string): string {
  return /\.(\w+)(\[\d+\])?$/.exec(path)?.[1] ?? path;
}

function beginBatch(ctx: ScopeContext, source: Source, w: Window): UsageBatch {
  return ctx.store.beginUsageBatch({
    table: source === 'v2_frameworks' ? 'usage_framework' : 'usage_program',
    ...(source === 'v2_frameworks' ? {} : { apiVersion: source === 'v1_programs' ? ('v1' as const) : ('v2' as const) }),
    granularity: ctx.granularity,
    windowStart: new Date(w.from),
    windowEnd: new Date(w.to),
    scope: { orgId: ctx.org },
    coverage: { source, scope: ctx.org, status: w.partial ? 'partial' : 'complete' },
    ...(ctx.acceptDeletions ? {} : { maxDeletionShare: ctx.config.collect.max_deletion_share }),
    runId: ctx.runId,
    collectedAt: new Date(),
  });
}

function baseQuery(ctx: ScopeContext, w: Window) {
  return { granularity: ctx.granularity, from: new Date(w.from).toISOString(), to: new Date(w.to).toISOString() };
}

function describe(source: Source, ctx: ScopeContext): string {
  return `GET ${CONSUMPTION_PATHS[source]} (${ctx.granularity}, org ${ctx.org})`;
}

type Fetcher = (ctx: ScopeContext, w: Window, batch: UsageBatch) => Promise<void>;

// How many pages a scope can justify: twice what the inventory counts (programs appear between
// refreshes), plus two (a last empty page); without an inventory, collect.max_pages.
const ORG_PROGRAMS_COUNT = 'src/store/sql/inventory_org_program_count.sql';
const PROGRAMS_FRAMEWORKS_COUNT = 'src/store/sql/inventory_framework_count.sql';

async function pageBound(ctx: ScopeContext, sqlFile: string, params: Record<string, unknown>, limit: number, what: string) {
  const [row] = await ctx.store.query<{ n: bigint }>(readSql(sqlFile), params);
  const known = Number(row?.n ?? 0);
  if (known > 0) return { pages: Math.ceil((known * 2) / limit) + 2, why: `the ${known} ${what} the inventory knows` };
  return { pages: ctx.config.collect.max_pages, why: `collect.max_pages (no inventory of ${what} yet)` };
}

const fetchV1: Fetcher = async (ctx, w, batch) => {
  const limit = PAGE_SIZE.v1_programs.max;
  const what = describe('v1_programs', ctx);
  const maxPages = await pageBound(ctx, ORG_PROGRAMS_COUNT, { org_id: ctx.org }, limit, 'programs');
  const pages = cursorPages(
    (cursor) => stagePage(ctx, batch, 'v1_programs', what, { ...baseQuery(ctx, w), org_id: ctx.org, metrics: V1_METRICS, limit, cursor }),
    { itemsKey: 'programs', limit, describe: what, maxPages },
  );
  for await (const _ of pages) ctx.checkAbort();
};

/** One scope with a single source: stage, commit, record. Not-eligible (403) is recorded, not a failure. */
async function runScope(ctx: ScopeContext, source: Source, w: Window | null, out: ScopeResult[], fetch: Fetcher): Promise<void> {
  if (!w) {
    out.push({ source, granularity: ctx.granularity, scope: ctx.org, from: null, to: null, status: 'up_to_date', rows: 0 });
    return;
  }
  const batch = beginBatch(ctx, source, w);
  try {
    await fetch(ctx, w, batch);
    const { rows } = await batch.commit();
    out.push(scopeResult(source, ctx, w, w.partial ? 'partial' : 'complete', rows));
  } catch (err) {
    await batch.abort().catch(() => {});
    out.push(await scopeFailure(ctx, source, w, err));
  }
}

async function scopeFailure(ctx: ScopeContext, source: Source, w: Window, err: unknown): Promise<ScopeResult> {
  if (err instanceof ApiError && err.status === 401) throw fatal401(err);
  if (err instanceof FatalCollectError || err instanceof CollectInterrupted) throw err;
  // DuckDB out of memory: every later scope would fail alike, and a store pressed further risks its file
  // (ARCHITECTURE.md, "Storage"). The scope was rolled back; the run stops (exit 1), the file intact.
  if (isOutOfMemory(err)) {
    throw new FatalCollectError(
      `the database ran out of memory (store.memory_limit = ${ctx.config.store.memory_limit}): ${(err as Error).message.split('\n')[0]}. ` +
        `Nothing of the scope in progress was written; raise store.memory_limit in the config and collect again.`,
    );
  }
  // The database file itself cannot be read: nothing more is written, and it must never be published.
  if (isStoreCorruption(err)) throw err instanceof StoreCorruptError ? err : new StoreCorruptError(ctx.store.path, (err as Error).message.split('\n')[0] ?? '');
  // Stopped by a signal: every wait ends with the signal's reason; the scope is rolled back, not failed.
  if (ctx.signal?.aborted) throw new CollectInterrupted();
  const notEligible = err instanceof ApiError && err.status === 403;
  // For a 403 the API's own words say why (which plan family the endpoint serves); the request is in the log.
  const detail = notEligible
    ? `403 ${err.code || 'forbidden'}: ${err.apiMessage} (request id ${err.requestId})`
    : err instanceof Error
      ? err.message
      : String(err);
  const status = notEligible ? 'not_eligible' : 'failed';
  if (!notEligible) ctx.log.warn('scope failed; other scopes go on', { source, granularity: ctx.granularity, org: ctx.org, error: detail });
  await ctx.store.recordCoverage({
    source,
    granularity: ctx.granularity,
    scope: ctx.org,
    windowStart: new Date(w.from),
    windowEnd: new Date(w.to),
    status,
    rows: 0,
    runId: ctx.runId,
    collectedAt: new Date(),
    detail,
  });
  return { ...scopeResult(source, ctx, w, status, 0), detail };
}

function scopeResult(source: Source, ctx: ScopeContext, w: Window, status: ScopeStatus, rows: number): ScopeResult {
  return {
    source,
    granularity: ctx.granularity,
    scope: ctx.org,
    from: new Date(w.from).toISOString(),
    to: new Date(w.to).toISOString(),
    status,
    rows,
  };
}

/**
 * v2 programs for one organization, and, pipelined behind the programs pages, the frameworks of their
 * programs, in requests of at most 100 programs sized by FrameworkQueue (frameworkBatches.ts). Deleted
 * programs are on the programs pages too, so their frameworks are asked about as well.
 */
async function runV2(ctx: ScopeContext, w: Window | null, withFrameworks: boolean, out: ScopeResult[]): Promise<void> {
  if (!w) {
    out.push({ source: 'v2_programs', granularity: ctx.granularity, scope: ctx.org, from: null, to: null, status: 'up_to_date', rows: 0 });
    return;
  }
  const programs = beginBatch(ctx, 'v2_programs', w);
  const frameworks = withFrameworks ? beginBatch(ctx, 'v2_frameworks', w) : null;
  const limit = PAGE_SIZE.v2_programs.max;
  const what = describe('v2_programs', ctx);
  const frameworkFetches: Promise<void>[] = [];
  const queue = new FrameworkQueue(ctx, w, (ids) => {
    const f = fetchFrameworks(ctx, w, ids, frameworks!);
    f.catch(() => {}); // awaited below; keep an early rejection from being reported as unhandled
    frameworkFetches.push(f);
  });
  let programsError: unknown;
  try {
    const maxPages = await pageBound(ctx, ORG_PROGRAMS_COUNT, { org_id: ctx.org }, limit, 'programs');
    for await (const page of cursorPages(
      (cursor) =>
        stagePage(ctx, programs, 'v2_programs', what, { ...baseQuery(ctx, w), org_id: ctx.org, metrics: V2_PROGRAM_METRICS, limit, cursor }),
      { itemsKey: 'programs', limit, describe: what, maxPages },
    )) {
      ctx.checkAbort();
      if (frameworks) await queue.add(page.programIds, false);
    }
    if (frameworks) await queue.add([], true);
  } catch (err) {
    programsError = err;
  }
  const fw = await Promise.allSettled(frameworkFetches);
  const fwError = fw.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason;
  if (ctx.signal?.aborted) {
    // Stopped: both batches are rolled back (nothing of this scope changes), committed scopes stay.
    await programs.abort().catch(() => {});
    await frameworks?.abort().catch(() => {});
    throw new CollectInterrupted();
  }

  if (!programsError) {
    try {
      const { rows } = await programs.commit();
      out.push(scopeResult('v2_programs', ctx, w, w.partial ? 'partial' : 'complete', rows));
    } catch (err) {
      programsError = err; // refused at commit (duplicates, rows outside, deletions held): nothing written
    }
  }
  if (programsError) {
    await programs.abort().catch(() => {});
    out.push(await scopeFailure(ctx, 'v2_programs', w, programsError));
  }
  if (frameworks) {
    // Without the full list of programs the frameworks batch cannot be complete either.
    let err = programsError ?? fwError;
    if (!err) {
      try {
        const { rows } = await frameworks.commit();
        out.push(scopeResult('v2_frameworks', ctx, w, w.partial ? 'partial' : 'complete', rows));
      } catch (e) {
        err = e;
      }
    }
    if (err) {
      await frameworks.abort().catch(() => {});
      out.push(await scopeFailure(ctx, 'v2_frameworks', w, err));
    }
  }
}

const FRAMEWORK_COUNTS = 'src/store/sql/inventory_framework_count_by_program.sql';

/**
 * The programs of the programs pages, cut into frameworks requests by nextBatchSize(): pipelined behind
 * the programs pages, a request leaves as soon as its programs are known.
 */
class FrameworkQueue {
  private readonly ids: string[] = [];
  private readonly counts: number[] = [];

  constructor(
    private readonly ctx: ScopeContext,
    private readonly w: Window,
    private readonly send: (ids: string[]) => void,
  ) {}

  async add(programIds: string[], final: boolean): Promise<void> {
    if (programIds.length > 0) {
      const known = await this.ctx.store.query<{ program_id: string; n: bigint }>(readSql(FRAMEWORK_COUNTS), {
        program_ids: programIds,
        window_start: new Date(this.w.from),
      });
      const byId = new Map(known.map((r) => [r.program_id, Number(r.n)]));
      for (const id of programIds) {
        this.ids.push(id);
        this.counts.push(byId.get(id) ?? 0);
      }
    }
    for (let n; (n = nextBatchSize(this.counts, PAGE_SIZE.v2_frameworks.max, MAX_PROGRAM_IDS, final)) > 0; ) {
      this.counts.splice(0, n);
      this.send(this.ids.splice(0, n));
    }
  }
}

async function fetchFrameworks(ctx: ScopeContext, w: Window, programIds: string[], batch: UsageBatch) {
  if (!programIds.length) return;
  const limit = PAGE_SIZE.v2_frameworks.max;
  const what = `GET ${CONSUMPTION_PATHS.v2_frameworks} (${ctx.granularity}, org ${ctx.org}, programs ${programIds[0]}..${programIds.at(-1)})`;
  const maxPages = await pageBound(ctx, PROGRAMS_FRAMEWORKS_COUNT, { program_ids: programIds }, limit, 'frameworks of these programs');
  const asked = new Set(programIds);
  const pages = cursorPages(
    (cursor) =>
      stagePage(ctx, batch, 'v2_frameworks', what, {
        ...baseQuery(ctx, w),
        program_ids: programIds,
        metrics: V2_FRAMEWORK_METRICS,
        limit,
        cursor,
      }),
    { itemsKey: 'frameworks', limit, describe: what, maxPages },
  );
  for await (const page of pages) {
    ctx.checkAbort();
    const stray = page.programIds.find((id) => !asked.has(id));
    if (stray !== undefined) {
      throw new ResponseFormatError(
        `${what}: the answer holds program ${stray}, which was not asked for (request id ${page.requestId}); nothing of this scope was changed.`,
        page.requestId,
        what,
      );
    }
  }
}
