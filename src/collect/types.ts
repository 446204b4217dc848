// What a collection is asked (its options and progress callbacks) and what it answers (each scope's result).
import type { ApiClient } from '../api/client.js';
import type { Granularity, Source } from '../domain/granularity.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/store.js';

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
export type CollectPhase = 'organizations' | 'consumption' | 'inventory' | 'checkpoint' | 'alerts' | 'publishing';

/** What a run tells whoever watches it; each callback is optional (a watcher may want only the phases). */
export interface CollectProgress {
  onPage?(source: Source, rows: number): void;
  /** Requests the run expects to send in all (grows as the plan becomes known). */
  onPlanned?(requests: number): void;
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
