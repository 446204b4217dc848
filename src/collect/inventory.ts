// Programs, frameworks and snapshots into the dimension tables, on a budget (ARCHITECTURE.md, "Data path
// of collect"). Listing a program's frameworks and snapshots costs two requests per program, so:
// - it runs after the consumption of the run is committed, never before it;
// - it commits as it goes (each programs page with its cursor, each batch of listings with its state),
//   so an interrupted or budget-limited refresh resumes where it stopped and re-sends nothing committed;
// - it spends requests only where something can have changed or is unknown: the programs listing when
//   older than inventory.max_age_hours or when consumption names a program it does not know; a program's
//   listings when never made, when consumption names a framework not yet named, when the program's
//   updated_at moved, or (without an updated_at) when older than inventory.max_age_hours;
// - it stops at its request budget (inventory.max_request_share of an hour at the configured rate).
import type { ApiClient } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import type { Store } from '../store/store.js';
import type { FrameworkRow, SnapshotRow } from '../store/types.js';
import type { Logger } from '../log.js';
import { cursorPages, jsonPage } from './pagers.js';

/** GET /programs page size: the spec leaves it unstated; the sandbox and the real API accept 400. */
export const PROGRAMS_LIST_LIMIT = 400;
/** Listings committed together: small enough that a stop loses little, large enough to be cheap to commit. */
export const LISTING_BATCH = 100;

const STATE = { cursor: 'programs_cursor', started: 'programs_listing_started_at', listed: 'programs_listed_at' } as const;

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

const asDate = (v: unknown): Date | null => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v) : null);
const asStr = (v: unknown): string | null => (typeof v === 'string' ? v : null);

export async function refreshInventory(opts: InventoryOptions): Promise<InventoryResult> {
  const { client, store } = opts;
  const out: InventoryResult = { requests: 0, programs: 0, frameworks: 0, snapshots: 0, remaining: 0 };
  const call = { ...(opts.stop ? { signal: opts.stop } : {}), ...(opts.inflight ? { inflight: opts.inflight } : {}) };
  const spend = () => {
    out.requests++;
    opts.onRequest?.();
  };
  const runStart = new Date(opts.now());

  // 1. The programs listing, when due; resumed from its cursor when an earlier run stopped in it.
  const cursor = await store.inventoryState(STATE.cursor);
  const startedText = await store.inventoryState(STATE.started);
  const listedText = await store.inventoryState(STATE.listed);
  const unknown = await store.unknownProgramsInRun(opts.runId);
  const listedAt = listedText ? Date.parse(listedText) : null;
  const due =
    opts.force || startedText !== null || listedAt === null || opts.now() - listedAt >= opts.maxAgeHours * 3_600_000 || unknown.length > 0;
  if (due) {
    const started = startedText ? new Date(startedText) : runStart;
    if (!startedText) await store.setInventoryState(STATE.started, started.toISOString());
    const wanted = new Set(opts.orgs);
    let finished = true;
    const pages = cursorPages(
      async (c) => {
        if (out.requests >= opts.budget) throw new BudgetSpent();
        opts.stop?.throwIfAborted();
        spend();
        const { body, requestId } = await client.getJson('/programs', { limit: PROGRAMS_LIST_LIMIT, cursor: c }, call);
        return jsonPage<Obj>(body, 'programs', requestId);
      },
      { itemsKey: 'programs', limit: PROGRAMS_LIST_LIMIT, describe: 'GET /programs', ...(cursor ? { start: cursor } : {}) },
    );
    try {
      for await (const page of pages) {
        const rows = page.list
          .filter((p) => wanted.size === 0 || wanted.has(String(p.org_id)))
          .map((p) => ({
            program_id: String(p.id),
            org_id: asStr(p.org_id),
            name: asStr(p.name),
            region_id: asStr(p.region_id),
            created_at: asDate(p.created_at),
            updated_at: asDate(p.updated_at),
          }));
        const last = !page.cursor || page.items === null || page.items < PROGRAMS_LIST_LIMIT;
        await store.recordProgramsPage(rows, { seenAt: started, cursorKey: STATE.cursor, cursor: last ? null : page.cursor });
        out.programs += rows.length;
      }
    } catch (err) {
      if (!(err instanceof BudgetSpent)) throw err;
      finished = false;
    }
    if (finished) {
      await store.markProgramsUnseen([...new Set(opts.orgs)], started);
      await store.markSought('program', unknown, runStart);
      await store.setInventoryState(STATE.cursor, null);
      await store.setInventoryState(STATE.started, null);
      await store.setInventoryState(STATE.listed, started.toISOString());
    } else {
      opts.log.info('inventory budget spent in the programs listing; the next run resumes it', { requests: out.requests });
      return out;
    }
  }

  // 2. The listings due, within what is left of the budget, committed batch by batch.
  const listings = await store.inventoryListingsDue({
    staleBefore: opts.force ? runStart : new Date(opts.now() - opts.maxAgeHours * 3_600_000),
    orgIds: [...opts.orgs],
    runId: opts.runId,
    force: opts.force,
  });
  const affordable = Math.max(0, opts.budget - out.requests);
  const todo = listings.slice(0, affordable);
  out.remaining = listings.length - todo.length;
  opts.onPlanned?.(out.requests + todo.length);
  for (let i = 0; i < todo.length; i += LISTING_BATCH) {
    const batch = todo.slice(i, i + LISTING_BATCH);
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
          body = (await client.getJson<{ frameworks?: Obj[]; snapshots?: Obj[] }>(path, {}, { route: `/programs/{id}/${kind}`, ...call })).body;
        } catch (err) {
          // Deleted since the programs listing: it has no live frameworks or snapshots any more.
          if (err instanceof ApiError && err.status === 404) body = {};
          else throw err;
        }
        if (kind === 'frameworks') {
          frameworksOf.push(programId);
          for (const f of body.frameworks ?? []) {
            frameworks.push({
              framework_id: String(f.id),
              program_id: asStr(f.program_id) ?? programId,
              name: asStr(f.name),
              current_state: asStr(f.current_state),
              created_at: asDate(f.created_at),
            });
          }
        } else {
          snapshotsOf.push(programId);
          for (const s of body.snapshots ?? []) {
            snapshots.push({
              snapshot_id: String(s.id),
              program_id: programId,
              name: asStr(s.name),
              source_framework_id: asStr(s.source_branch_id),
              created_at: asDate(s.created_at),
              manual: typeof s.manual === 'boolean' ? s.manual : null,
              expires_at: asDate(s.expires_at),
            });
          }
        }
      }),
    );
    // What arrived is committed even when the run is stopping: it is never asked for again.
    await store.recordListings({ frameworksOf, frameworks, snapshotsOf, snapshots, listedAt: new Date(opts.now()) });
    out.frameworks += frameworks.length;
    out.snapshots += snapshots.length;
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      out.remaining += todo.length - i - batch.length + settled.filter((r) => r.status === 'rejected').length;
      throw failed.reason;
    }
  }
  opts.log.info('inventory refreshed', { programs: out.programs, frameworks: out.frameworks, snapshots: out.snapshots, requests: out.requests, remaining: out.remaining });
  return out;
}

class BudgetSpent extends Error {}
