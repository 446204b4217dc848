// The frameworks the stored usage names for each program: what the store knows of a program's frameworks
// without the inventory, by which the collector sizes its frameworks requests (collect/frameworkBatches.ts).
import type { StoreContext } from './context.js';
import { num } from './context.js';

// Parameters: $org_id VARCHAR, $window_start TIMESTAMPTZ. Per program of the organization, the distinct
// frameworks with a bucket (any granularity) starting at or after $window_start: each existed after the
// window's start, so the frameworks endpoint lists it for that window (it lists the live frameworks and
// those deleted after the window's start). One seen only earlier may have been deleted before it, so
// earlier buckets are not counted. A lower bound: frameworks created since, or without usage, are missing.
// One query per scope rather than per programs page: it scans the organization's rows of the window and
// after (zone maps on timeframe_start skip row groups of older windows), 55-95 ms for 4,500 programs on the
// benchmark's 6.6 M rows at 1 thread, where one query per programs page took 30-40 ms each, 45 times.
const USAGE_FRAMEWORK_COUNT_BY_PROGRAM_SQL = `
SELECT program_id, count(DISTINCT framework_id) AS frameworks
FROM usage_framework_buckets
WHERE org_id = $org_id AND timeframe_start >= $window_start
GROUP BY program_id;`;

/** Frameworks with usage since windowStart, per program of one organization (programs with none have no entry). */
export async function frameworksInUsageByProgram(cx: StoreContext, orgId: string, windowStart: Date): Promise<Map<string, number>> {
  const rows = await cx.sql.query<{ program_id: string; frameworks: bigint }>(USAGE_FRAMEWORK_COUNT_BY_PROGRAM_SQL, {
    org_id: orgId,
    window_start: windowStart,
  });
  return new Map(rows.map((r) => [r.program_id, num(r.frameworks)]));
}
