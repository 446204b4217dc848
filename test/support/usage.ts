// Helpers shared by the collector's tests: ground-truth sums and a content hash of the usage tables.
import { expectedRows } from '../../src/sandbox/truth.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import type { Store } from '../../src/store/store.js';
import { V1_METRICS } from '../../src/contract/api.js';
import { type Granularity, type Source } from '../../src/domain/granularity.js';
import { rawSql } from '../../src/store/rawSql.js';

/** Sum per (program or framework, metric) for each complete coverage window, from the sandbox's truth. */
export function truthSums(
  sb: Sandbox,
  source: Source,
  g: Granularity,
  windows: { scope: string; from: number; to: number }[],
  now: number,
) {
  const sums = new Map<string, bigint>();
  for (const w of windows) {
    for (const r of expectedRows(sb.world, {
      source,
      granularity: g,
      from: w.from,
      to: w.to,
      now,
      orgId: w.scope,
      ...(source === 'v1_programs' ? { metrics: V1_METRICS } : {}),
    })) {
      const key = `${source === 'v2_frameworks' ? r.framework_id : r.program_id}|${r.metric}`;
      sums.set(key, (sums.get(key) ?? 0n) + r.value);
    }
  }
  for (const [k, v] of sums) if (v === 0n) sums.delete(k);
  return sums;
}

export async function storedSums(store: Store, source: Source, g: Granularity) {
  const rows =
    source === 'v2_frameworks'
      ? await rawSql(store).query<{ id: string; metric: string; total: bigint }>(
          `SELECT framework_id AS id, metric, sum(value) AS total FROM usage_framework WHERE granularity = $g GROUP BY ALL`,
          { g },
        )
      : await rawSql(store).query<{ id: string; metric: string; total: bigint }>(
          `SELECT program_id AS id, metric, sum(value) AS total FROM usage_program WHERE granularity = $g AND api_version = $v GROUP BY ALL`,
          { g, v: source === 'v1_programs' ? 'v1' : 'v2' },
        );
  const sums = new Map<string, bigint>();
  for (const r of rows) if (BigInt(r.total) !== 0n) sums.set(`${r.id}|${r.metric}`, BigInt(r.total));
  return sums;
}

export async function completeWindows(store: Store, source: Source, g: Granularity) {
  const rows = await rawSql(store).query<{ scope: string; window_start: Date; window_end: Date }>(
    `SELECT scope, window_start, window_end FROM coverage WHERE source = $source AND granularity = $g AND status = 'complete' ORDER BY collected_at`,
    { source, g },
  );
  // Incremental windows overlap the previous ones, so per scope the table holds their union.
  const span = new Map<string, { scope: string; from: number; to: number }>();
  for (const r of rows) {
    const from = new Date(r.window_start).getTime();
    const to = new Date(r.window_end).getTime();
    const s = span.get(r.scope);
    span.set(
      r.scope,
      s ? { scope: r.scope, from: Math.min(s.from, from), to: Math.max(s.to, to) } : { scope: r.scope, from, to },
    );
  }
  return [...span.values()];
}

/** Everything the usage tables hold, apart from which run wrote it and when. */
export async function usageFingerprint(store: Store): Promise<string[]> {
  const p = await rawSql(store).query<{ line: string }>(
    `SELECT concat_ws('|', api_version, granularity, org_id, program_id, period_id, period_plan, period_start, period_end, timeframe_start, timeframe_end, metric, value) AS line FROM usage_program ORDER BY line`,
  );
  const f = await rawSql(store).query<{ line: string }>(
    `SELECT concat_ws('|', granularity, org_id, program_id, framework_id, period_id, period_plan, period_start, period_end, timeframe_start, timeframe_end, metric, value) AS line FROM usage_framework ORDER BY line`,
  );
  return [...p.map((r) => 'p|' + r.line), ...f.map((r) => 'f|' + r.line)];
}
