// The inventory's turn in a collection, after every consumption scope is committed: its request budget
// (a share of the hour's requests), the grace a stop leaves to requests already sent, and its scope result.
import { setMaxListeners } from 'node:events';
import { ApiError } from '../api/errors.js';
import { CollectInterrupted, fatal401 } from './errors.js';
import { refreshInventory } from './inventory.js';
import type { CollectOptions, ScopeResult } from './types.js';

/** After a stop, requests already sent get this long to answer, so that what arrived is committed. */
const INVENTORY_GRACE_MS = 2_000;

export async function maybeRefreshInventory(
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
  const onPlanned = (n: number) => opts.progress?.onPlanned?.(consumptionRequests + n);
  // A stop ends waits at once, but the inventory's requests already sent may answer for a moment longer.
  const { grace, clear } = graceAfterStop(opts.signal);
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
      refreshBudget: Math.min(
        budget,
        Math.max(1, Math.floor(opts.config.inventory.refresh_share * consumptionRequests)),
      ),
      force: mode === 'always',
      ...(opts.signal ? { stop: opts.signal } : {}),
      ...(grace ? { inflight: grace.signal } : {}),
      onPlanned,
    });
    acc.remaining = r.remaining;
    if (r.remaining > 0) {
      opts.log.info('inventory budget reached; the next run goes on where this one stopped', {
        remaining_listings: r.remaining,
        budget_requests: budget,
      });
    }
    scopes.push({
      source: 'inventory',
      granularity: null,
      scope: 'all',
      from: null,
      to: null,
      status: 'complete',
      rows: r.programs + r.frameworks + r.snapshots,
    });
  } catch (err) {
    if (opts.signal?.aborted) throw new CollectInterrupted();
    if (err instanceof ApiError && err.status === 401) throw fatal401(err);
    const detail = err instanceof Error ? err.message : String(err);
    opts.log.warn('inventory refresh failed; consumption is collected anyway', { error: detail });
    scopes.push({
      source: 'inventory',
      granularity: null,
      scope: 'all',
      from: null,
      to: null,
      status: 'failed',
      rows: 0,
      detail,
    });
  } finally {
    clear();
  }
}

/** A signal aborted INVENTORY_GRACE_MS after `stop` is, and the clearing of its timer once the inventory ends. */
function graceAfterStop(stop: AbortSignal | undefined) {
  let grace: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let onStop: (() => void) | undefined;
  if (stop) {
    grace = new AbortController();
    // Every queued inventory request listens on it (as on the stop signal, see ApiClient): not a leak.
    setMaxListeners(0, grace.signal);
    const g = grace;
    onStop = () => {
      timer = setTimeout(() => g.abort(stop.reason), INVENTORY_GRACE_MS);
      timer.unref();
    };
    if (stop.aborted) onStop();
    else stop.addEventListener('abort', onStop, { once: true });
  }
  return {
    grace,
    clear: () => {
      if (timer) clearTimeout(timer);
      // A listener left on a composite signal (the daemon's per-run AbortSignal.any) keeps it, and what it holds, alive for good.
      if (stop && onStop) stop.removeEventListener('abort', onStop);
    },
  };
}
