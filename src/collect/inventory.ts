// Programs, frameworks and snapshots into the dimension tables, on a budget (ARCHITECTURE.md, "Data path
// of collect"). Listing a program's frameworks and snapshots costs two requests per program, so:
// - it runs after the consumption of the run is committed, never before it;
// - it commits as it goes (each programs page with its cursor, each batch of listings with its state),
//   so an interrupted or budget-limited refresh resumes where it stopped and re-sends nothing committed;
// - it spends requests only where something can have changed or is unknown: the whole programs listing
//   on the first run and when older than inventory.max_age_hours; a program that consumption names and
//   the inventory does not know, by id (GET /programs/{id}); a program's listings when never made, when
//   consumption names a framework not yet named, when the program's updated_at moved, or (without an
//   updated_at) when older than inventory.max_age_hours;
// - what is unknown (the first listing, new programs, their listings, unnamed frameworks) is named within
//   the run's budget (inventory.max_request_share of an hour at the configured rate); refreshing what is
//   known (the listing once old, listings whose updated_at moved) is trickled over runs within
//   inventory.refresh_share of the run's consumption requests, so a steady-state run spends little on it.
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import type { Store } from '../store/store.js';
import type { FrameworkRow, SnapshotRow } from '../store/types.js';
import type { Logger } from '../log.js';
import { cursorPages, jsonPage } from './pagers.js';

/** GET /programs page size: the API reference leaves it unstated; the sandbox and the real API accept 400. */
export const PROGRAMS_LIST_LIMIT = 400;
/** Listings committed together: small enough that a stop loses little, large enough to be cheap to commit. */
export const LISTING_BATCH = 100;

const STATE = {
  cursor: 'programs_cursor',
  started: 'programs_listing_started_at',
  listed: 'programs_listed_at',
} as const;

type Obj = Record<string, unknown>;

export interface InventoryResult {
  requests: number;
  programs: number;
  frameworks: number;
  snapshots: number;
  /** Listings (a program's frameworks or snapshots) still due when the run stopped at its budget. */
  remaining: number;
}

export interface InventoryOptions {
  client: ApiClient;
  store: Store;
  /** The organizations collected; empty: every one the key sees. */
  orgs: readonly string[];
  runId: string;
  now: () => number;
  log: Logger;
  maxAgeHours: number;
  /** Most requests this run may spend. */
  budget: number;
  /** Most of those that refreshing what is already known (an old listing, moved updated_at) may spend. */
  refreshBudget: number;
  /** 'always': the programs listing now and every listing older than this run. */
  force: boolean;
  /** No new request once aborted. */
  stop?: AbortSignal;
  /** Cancels requests already sent (later than `stop`, so that answers on their way are kept). */
  inflight?: AbortSignal;
  onRequest?: () => void;
  /** Requests the inventory expects to send in this run (known once the programs listing is read). */
  onPlanned?: (requests: number) => void;
}

const asDate = (v: unknown): Date | null =>
  typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null;
const asStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** One refresh's shared state: what it has spent and found so far, and how it calls the API. */
interface Refresh {
  opts: InventoryOptions;
  client: ApiClient;
  store: Store;
  out: InventoryResult;
  call: { signal?: AbortSignal; inflight?: AbortSignal };
  spend: () => void;
  runStart: Date;
  /** The organizations collected (empty: all). */
  wanted: Set<string>;
  /** The refresh's requests so far (it shares the refresh budget with the listings whose updated_at moved). */
  refreshSpent: number;
}

/** What phase 1 does: ask for unknown programs by id, or (re)read the programs listing, or both, or neither. */
interface ListingPlan {
  cursor: string | null;
  startedText: string | null;
  unknown: string[];
  byId: boolean;
  listingDue: boolean;
  isRefresh: boolean;
}

export async function refreshInventory(opts: InventoryOptions): Promise<InventoryResult> {
  const { client, store } = opts;
  const out: InventoryResult = { requests: 0, programs: 0, frameworks: 0, snapshots: 0, remaining: 0 };
  const call = { ...(opts.stop ? { signal: opts.stop } : {}), ...(opts.inflight ? { inflight: opts.inflight } : {}) };
  const spend = () => {
    out.requests++;
    opts.onRequest?.();
  };
  const runStart = new Date(opts.now());
  const r: Refresh = { opts, client, store, out, call, spend, runStart, wanted: new Set(opts.orgs), refreshSpent: 0 };

  // 1. The programs listing, when due; resumed from its cursor when an earlier run stopped in it. The first
  //    (never completed) listing names everything and may spend the whole budget; a re-read of an old one
  //    is a refresh, trickled within the refresh budget. Unknown programs are asked for by id unless a
  //    listing is cheaper.
  const plan = await planListing(r);
  if (plan.byId) await programsById(r, plan.unknown);
  if (plan.listingDue && !(await programsListing(r, plan))) return out;

  // 2. The listings due, within what is left of the budget, committed batch by batch.
  const todo = await listingsToDo(r);
  opts.onPlanned?.(out.requests + todo.length);
  for (let i = 0; i < todo.length; i += LISTING_BATCH) {
    const batch = todo.slice(i, i + LISTING_BATCH);
    const failed = await listingBatch(r, batch);
    if (failed) {
      out.remaining += todo.length - i - batch.length + failed.count;
      throw failed.reason;
    }
  }
  opts.log.info('inventory refreshed', {
    programs: out.programs,
    frameworks: out.frameworks,
    snapshots: out.snapshots,
    requests: out.requests,
    remaining: out.remaining,
  });
  return out;
}

/** Phase 1's decision, from the listing's state in the store and the programs consumption named. */
async function planListing(r: Refresh): Promise<ListingPlan> {
  const { opts, store } = r;
  const cursor = await store.inventory.state(STATE.cursor);
  const startedText = await store.inventory.state(STATE.started);
  const listedText = await store.inventory.state(STATE.listed);
  const unknown = await store.inventory.unknownProgramsInRun(opts.runId);
  const listedAt = listedText ? Date.parse(listedText) : null;
  const firstListing = listedAt === null;
  const old = listedAt !== null && opts.now() - listedAt >= opts.maxAgeHours * 3_600_000;
  const listingPages = Math.ceil(((await store.inventory.programTotal()) + unknown.length) / PROGRAMS_LIST_LIMIT);
  // Many unknown programs (an account that grew a lot): one listing names them for fewer requests.
  const byId = !firstListing && !opts.force && unknown.length > 0 && unknown.length <= Math.max(1, listingPages);
  const listingDue = opts.force || firstListing || startedText !== null || old || (unknown.length > 0 && !byId);
  const isRefresh = listingDue && !opts.force && !firstListing && !(unknown.length > 0 && !byId);
  return { cursor, startedText, unknown, byId, listingDue, isRefresh };
}

function programRow(p: Obj) {
  return {
    program_id: String(p.id),
    org_id: asStr(p.org_id),
    name: asStr(p.name),
    region_id: asStr(p.region_id),
    created_at: asDate(p.created_at),
    updated_at: asDate(p.updated_at),
  };
}

/** Phase 1a: the few programs consumption named and the inventory does not know, one request each. */
async function programsById(r: Refresh, unknown: string[]): Promise<void> {
  const { opts, client, store, out, call, spend, runStart, wanted } = r;
  const found: ReturnType<typeof programRow>[] = [];
  const todo = unknown.slice(0, Math.max(0, opts.budget - out.requests));
  const settled = await Promise.allSettled(
    todo.map(async (id) => {
      opts.stop?.throwIfAborted();
      spend();
      try {
        const { body } = await client.getJson<{ program?: Obj }>(
          `/programs/${encodeURIComponent(id)}`,
          {},
          { route: '/programs/{id}', ...call },
        );
        const p = body.program;
        if (p && typeof p === 'object' && (wanted.size === 0 || wanted.has(String(p.org_id))))
          found.push(programRow(p));
      } catch (err) {
        // Deleted before the inventory ever saw it: looked for once (below), not on every run.
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      }
    }),
  );
  // What arrived is committed even when the run is stopping.
  if (found.length > 0) await store.inventory.recordProgramsPage(found, { seenAt: runStart });
  out.programs += found.length;
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const done = todo.filter((_, i) => settled[i]?.status === 'fulfilled');
  await store.inventory.markSought('program', done, runStart);
  if (failed) throw failed.reason;
}

/**
 * Phase 1b: the programs listing, page by page from its cursor. False when the budget ran out in a first
 * listing (the run stops there; the next one resumes it), true when it finished or a refresh was trickled.
 */
async function programsListing(r: Refresh, plan: ListingPlan): Promise<boolean> {
  const { opts, client, store, out, call, spend, runStart, wanted } = r;
  const { cursor, startedText, unknown, byId, isRefresh } = plan;
  const started = startedText ? new Date(startedText) : runStart;
  if (!startedText) await store.inventory.setState(STATE.started, started.toISOString());
  let finished = true;
  const pages = cursorPages(
    async (c) => {
      if (out.requests >= opts.budget || (isRefresh && r.refreshSpent >= opts.refreshBudget)) throw new BudgetSpent();
      opts.stop?.throwIfAborted();
      spend();
      if (isRefresh) r.refreshSpent++;
      const { body, requestId } = await client.getJson('/programs', { limit: PROGRAMS_LIST_LIMIT, cursor: c }, call);
      return jsonPage<Obj>(body, 'programs', requestId);
    },
    {
      itemsKey: 'programs',
      limit: PROGRAMS_LIST_LIMIT,
      describe: 'GET /programs',
      ...(cursor ? { start: cursor } : {}),
    },
  );
  try {
    for await (const page of pages) {
      const rows = page.list.filter((p) => wanted.size === 0 || wanted.has(String(p.org_id))).map(programRow);
      const last = !page.cursor || page.items === null || page.items < PROGRAMS_LIST_LIMIT;
      await store.inventory.recordProgramsPage(rows, {
        seenAt: started,
        cursorKey: STATE.cursor,
        cursor: last ? null : page.cursor,
      });
      out.programs += rows.length;
    }
  } catch (err) {
    if (!(err instanceof BudgetSpent)) throw err;
    finished = false;
  }
  if (finished) {
    await store.inventory.markProgramsUnseen([...new Set(opts.orgs)], started);
    if (!byId) await store.inventory.markSought('program', unknown, runStart);
    await store.inventory.setState(STATE.cursor, null);
    await store.inventory.setState(STATE.started, null);
    await store.inventory.setState(STATE.listed, started.toISOString());
  } else if (!isRefresh) {
    opts.log.info('inventory budget spent in the programs listing; the next run resumes it', {
      requests: out.requests,
    });
    return false;
  } else {
    opts.log.info('programs listing refresh trickled: the next run goes on from its cursor', {
      requests: r.refreshSpent,
      refresh_budget: opts.refreshBudget,
    });
  }
  return true;
}

/** Phase 2's plan: the listings due that fit the budget; the others are counted as remaining. */
async function listingsToDo(r: Refresh) {
  const { opts, store, out, runStart } = r;
  const listings = await store.inventory.listingsDue({
    staleBefore: opts.force ? runStart : new Date(opts.now() - opts.maxAgeHours * 3_600_000),
    orgIds: [...opts.orgs],
    runId: opts.runId,
    force: opts.force,
  });
  // Naming what is unknown (reasons 0, 1) first, within the budget; refreshing what is known (2, 3) within
  // what is left of the refresh budget too.
  const todo: typeof listings = [];
  let refreshLeft = opts.force ? Infinity : Math.max(0, opts.refreshBudget - r.refreshSpent);
  for (const l of listings) {
    if (out.requests + todo.length >= opts.budget) break;
    if (l.reason >= 2) {
      if (refreshLeft <= 0) continue;
      refreshLeft--;
    }
    todo.push(l);
  }
  out.remaining = listings.length - todo.length;
  return todo;
}

/** Phase 2, one batch: its listings fetched together and committed; the first failure and how many failed. */
async function listingBatch(
  r: Refresh,
  batch: { programId: string; kind: 'frameworks' | 'snapshots' }[],
): Promise<{ reason: unknown; count: number } | undefined> {
  const { opts, client, store, out, call, spend } = r;
  const frameworksOf: string[] = [];
  const snapshotsOf: string[] = [];
  const frameworks: FrameworkRow[] = [];
  const snapshots: SnapshotRow[] = [];
  const settled = await Promise.allSettled(
    batch.map(async ({ programId, kind }) => {
      opts.stop?.throwIfAborted();
      spend();
      const path = `/programs/${encodeURIComponent(programId)}/${kind}`;
      let body: { frameworks?: Obj[]; snapshots?: Obj[] };
      try {
        body = (
          await client.getJson<{ frameworks?: Obj[]; snapshots?: Obj[] }>(
            path,
            {},
            { route: `/programs/{id}/${kind}`, ...call },
          )
        ).body;
      } catch (err) {
        // Deleted since the programs listing: it has no live frameworks or snapshots any more.
        if (err instanceof ApiError && err.status === 404) body = {};
        else throw err;
      }
      if (kind === 'frameworks') {
        frameworksOf.push(programId);
        for (const f of body.frameworks ?? []) frameworks.push(frameworkRow(f, programId));
      } else {
        snapshotsOf.push(programId);
        for (const s of body.snapshots ?? []) snapshots.push(snapshotRow(s, programId));
      }
    }),
  );
  // What arrived is committed even when the run is stopping: it is never asked for again.
  await store.inventory.recordListings({
    frameworksOf,
    frameworks,
    snapshotsOf,
    snapshots,
    listedAt: new Date(opts.now()),
  });
  out.frameworks += frameworks.length;
  out.snapshots += snapshots.length;
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  return failed ? { reason: failed.reason, count: settled.filter((r) => r.status === 'rejected').length } : undefined;
}

function frameworkRow(f: Obj, programId: string): FrameworkRow {
  return {
    framework_id: String(f.id),
    program_id: asStr(f.program_id) ?? programId,
    name: asStr(f.name),
    current_state: asStr(f.current_state),
    created_at: asDate(f.created_at),
  };
}

function snapshotRow(s: Obj, programId: string): SnapshotRow {
  return {
    snapshot_id: String(s.id),
    program_id: programId,
    name: asStr(s.name),
    source_framework_id: asStr(s.source_branch_id),
    created_at: asDate(s.created_at),
    manual: typeof s.manual === 'boolean' ? s.manual : null,
    expires_at: asDate(s.expires_at),
  };
}

class BudgetSpent extends Error {}
