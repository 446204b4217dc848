// Outcome vocabularies shared by the collector, the store's coverage and run log, and the daemon.

/** How much of a window one collection covered, per (source, scope, granularity). */
export type CoverageStatus = 'complete' | 'partial' | 'not_eligible' | 'failed';
/** A run's state in the run log. */
/** interrupted: stopped by SIGINT/SIGTERM; what it committed before is kept. */
export type RunStatus = 'running' | 'complete' | 'partial' | 'failed' | 'interrupted';
/** How a finished collection ended. */
export type CollectStatus = Exclude<RunStatus, 'running'>;
