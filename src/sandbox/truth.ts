// The exact values the consumption endpoints answer, computed without HTTP: for tests and benchmarks
// to compare what was collected against. Same listing and bucket rules as the server (consumption.ts).

import { V1_DEFAULT_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { floorToGranularity, type Granularity, type Source } from '../domain/granularity.js';
import { entityPeriods, listFrameworks, listPrograms, type QueryWindow } from './consumption.js';
import type { Metric } from './usage.js';
import type { Labels, World } from './world.js';

export interface TruthRow {
  org_id: string;
  program_id: string;
  framework_id?: string;
  period_id: string;
  period_plan: string;
  timeframe_start: number;
  timeframe_end: number;
  metric: string;
  value: bigint;
}

export interface TruthQuery {
  source: Source;
  granularity: Granularity;
  from: number;
  to: number;
  now: number;
  /** Default: v1 the default metric set, v2 programs all eight, v2 frameworks all six. */
  metrics?: readonly string[];
  /** Default: every organisation the personal key reaches that is eligible for the source. */
  orgId?: string;
  programIds?: readonly string[];
}

/**
 * Rows of what the endpoint answers for this query at clock `now` (every page together): v1 one row
 * per requested metric and bucket, zeros included; v2 only non-zero values. Look-back limits are not
 * applied (the truth of any window is available).
 */
export function expectedRows(world: World, q: TruthQuery): TruthRow[] {
  const w: QueryWindow = {
    granularity: q.granularity,
    from: floorToGranularity(q.from, q.granularity),
    to: floorToGranularity(q.to, q.granularity),
    now: q.now,
  };
  const metrics = (q.metrics ??
    (q.source === 'v1_programs'
      ? V1_DEFAULT_METRICS
      : q.source === 'v2_programs'
        ? V2_PROGRAM_METRICS
        : V2_FRAMEWORK_METRICS)) as readonly Metric[];
  const billing = q.source === 'v1_programs' ? 'legacy' : 'current';
  const orgIds = new Set(
    (q.orgId !== undefined ? [q.orgId] : world.personal_org_ids).filter(
      (id) => world.orgById.get(id)?.billing === billing,
    ),
  );
  const programIds = q.programIds ? new Set(q.programIds) : undefined;
  const programs = listPrograms(
    world,
    q.source === 'v1_programs' ? 'v1_programs' : 'v2_programs',
    orgIds,
    w,
    programIds,
  );
  const rows: TruthRow[] = [];
  const keepZeros = q.source === 'v1_programs';
  const targets =
    q.source === 'v2_frameworks'
      ? listFrameworks(
          world,
          programs.map((p) => p.id),
          w,
        )
      : programs.map((program) => ({ program, framework: undefined }));
  for (const { program, framework } of targets) {
    for (const { period, buckets } of entityPeriods(world, q.source, program, framework, metrics, w)) {
      for (const b of buckets) {
        b.values.forEach((v, i) => {
          if (!keepZeros && (v === 0 || v === 0n)) return;
          rows.push({
            org_id: program.org_id,
            program_id: program.id,
            ...(framework ? { framework_id: framework.id } : {}),
            period_id: period.period_id,
            period_plan: period.plan,
            timeframe_start: b.timeframe_start,
            timeframe_end: b.timeframe_end,
            metric: metrics[i] as string,
            value: BigInt(v),
          });
        });
      }
    }
  }
  return rows;
}

/** The world's labelled events (none for a quiet world): what an anomaly detector is scored against. */
export function labelledEvents(world: World): Labels {
  return world.labels ?? { spikes: [], starts: [], drifts: [], spending_limits: [] };
}
