// Facts of the management API, each beside the section of the public API reference it comes from
// (summarised in ARCHITECTURE.md, "API facts").
// The sandbox enforces them and the collector plans by them, so both read this one module.

import type { Granularity, Source } from '../domain/granularity.js';

// §4.3 paths, relative to {base_url} (which ends in /v1).
export const CONSUMPTION_PATHS: Record<Source, string> = {
  v1_programs: '/consumption_history/programs',
  v2_programs: '/consumption_history/v2/programs',
  v2_frameworks: '/consumption_history/v2/frameworks',
};

// §4.3 metric values.
export const V1_METRICS = [
  'active_time_seconds',
  'compute_time_seconds',
  'written_data_bytes',
  'synthetic_storage_size_bytes',
  'data_storage_bytes_hour',
  'logical_size_bytes',
  'logical_size_bytes_hour',
] as const;
export type V1Metric = (typeof V1_METRICS)[number];
/** §4.3: v1 metrics returned when `metrics` is omitted. */
export const V1_DEFAULT_METRICS: readonly V1Metric[] = [
  'active_time_seconds',
  'compute_time_seconds',
  'written_data_bytes',
  'synthetic_storage_size_bytes',
];
/** v1 metrics that are gauges (ARCHITECTURE.md, metric units): coarser buckets take the max, never the sum. */
export const V1_GAUGE_METRICS: readonly V1Metric[] = ['synthetic_storage_size_bytes', 'logical_size_bytes'];

export const V2_PROGRAM_METRICS = [
  'compute_unit_seconds',
  'root_branch_bytes_month',
  'child_branch_bytes_month',
  'instant_restore_bytes_month',
  'public_network_transfer_bytes',
  'private_network_transfer_bytes',
  'extra_branches_month',
  'snapshot_storage_bytes_month',
] as const;
export type V2Metric = (typeof V2_PROGRAM_METRICS)[number];
/** §4.3: the frameworks endpoint takes only the first six v2 metrics. */
export const V2_FRAMEWORK_METRICS: readonly V2Metric[] = V2_PROGRAM_METRICS.slice(0, 6);

// §8 limits.
export const PAGE_SIZE = {
  v1_programs: { min: 1, max: 100, default: 10 },
  v2_programs: { min: 1, max: 100, default: 10 },
  v2_frameworks: { min: 1, max: 1000, default: 100 },
} as const satisfies Record<Source, { min: number; max: number; default: number }>;
export const MAX_PROGRAM_IDS = 100; // §8 `program_ids` filter
export const MAX_BRANCH_IDS = 100; // §8 `branch_ids` filter
export const RATE_LIMIT_PER_MINUTE = 700; // §8 request rate, per key
export const BURST_PER_SECOND_PER_ROUTE = 40; // §8 burst, per route

// §4.3 / §8 usage windows: how far back `from` may reach, relative to now.
export const LOOKBACK_MS: Record<Granularity, number> = {
  hourly: 168 * 3_600_000,
  daily: 60 * 86_400_000,
  monthly: 365 * 86_400_000, // "last year"; the sandbox and the planner both use 365 days
};
export const EARLIEST_FROM = Date.UTC(2024, 2, 1); // 2024-03-01T00:00:00Z

/** Earliest `from` the API accepts at `now` for granularity `g` (look-back and the 2024-03-01 floor). */
export function earliestAllowedFrom(now: number, g: Granularity): number {
  return Math.max(EARLIEST_FROM, now - LOOKBACK_MS[g]);
}
