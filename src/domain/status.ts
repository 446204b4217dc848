// Outcome vocabularies shared by the collector, the store's coverage and run log, and the daemon.

/** How much of a window one collection covered, per (source, scope, granularity). */
export type CoverageStatus = 'complete' | 'partial' | 'not_eligible' | 'failed';
/** A run's state in the run log: `interrupted` ends a run stopped by a signal, or one its process never finished (marked at the next writer's open). */
export type RunStatus = 'running' | 'complete' | 'partial' | 'failed' | 'interrupted';
