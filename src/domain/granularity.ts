// The pipeline's own vocabulary of time and streams: granularities, the three consumption sources and
// the UTC bucket arithmetic every layer shares (the API rounds `from`/`to` the same way; see
// ARCHITECTURE.md, "API facts").

export type Granularity = 'hourly' | 'daily' | 'monthly';
export const GRANULARITIES: readonly Granularity[] = ['hourly', 'daily', 'monthly'];

/** The three consumption sources; each is also the snake_case stream name used in coverage and fixtures. */
export type Source = 'v1_programs' | 'v2_programs' | 'v2_frameworks';
export const SOURCES: readonly Source[] = ['v1_programs', 'v2_programs', 'v2_frameworks'];

/** `ms` rounded down to the start of its bucket (UTC). */
export function floorToGranularity(ms: number, g: Granularity): number {
  const d = new Date(ms);
  if (g === 'hourly') return Math.floor(ms / 3_600_000) * 3_600_000;
  if (g === 'daily') return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The start of the bucket after the one starting at `ms`. */
export function nextBucket(ms: number, g: Granularity): number {
  if (g === 'hourly') return ms + 3_600_000;
  if (g === 'daily') return ms + 86_400_000;
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
