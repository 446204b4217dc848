// Which granularity a report reads, and whether the period is completely collected: from the
// coverage table, the finest granularity whose complete windows cover the whole period for every
// (source, scope) that has coverage in it (hourly > daily > monthly).
import type { Granularity } from '../domain/granularity.js';
import { GRANULARITIES } from '../domain/granularity.js';
import type { Store } from '../store/store.js';

export interface ScopeCoverage {
  source: string;
  scope: string;
  granularity: Granularity;
  coveredMs: number;
  rangeMs: number;
  complete: boolean;
  /** Statuses of the coverage rows seen at this granularity ('complete,failed', ...). */
  statuses: string;
  runIds: string[];
}

export interface CoverageAssessment {
  /** True when the granularity used is complete for every scope that applies. */
  complete: boolean;
  granularity: Granularity;
  /** Granularities complete for the whole period, finest first. */
  completeGranularities: Granularity[];
  /** Why the chosen granularity was chosen. */
  reason: string;
  /** Per (source, scope) at the chosen granularity. Scopes only ever not eligible are listed, not required. */
  scopes: (ScopeCoverage & { required: boolean })[];
  /** Organizations every scope of which is not eligible (403 on both API versions): a final answer, no billable usage. */
  notEligible: string[];
}

/** What the About sheet says of an organization that is not eligible for any source. */
export function notEligibleLine(org: string): string {
  return `${org}: every scope is not eligible (403 on both API versions), a final answer: complete for the period, with no billable usage`;
}

const FINEST_FIRST: readonly Granularity[] = GRANULARITIES; // hourly, daily, monthly

export async function assessCoverage(store: Store, rangeStart: Date, rangeEnd: Date): Promise<CoverageAssessment> {
  const rangeMs = rangeEnd.getTime() - rangeStart.getTime();
  const rows = await store.report.tables.coverageOfRange(rangeStart, rangeEnd);
  const all: ScopeCoverage[] = rows.map((r) => ({
    source: r.source,
    scope: r.scope,
    granularity: r.granularity,
    coveredMs: Number(r.covered_ms),
    rangeMs,
    complete: Number(r.covered_ms) >= rangeMs,
    statuses: r.statuses,
    runIds: r.run_ids ? r.run_ids.split(',') : [],
  }));
  // A scope that was only ever 'not_eligible' (a legacy organization on the v2 endpoints, say) has
  // its data in another source: it is reported but does not make the period partial.
  const key = (c: ScopeCoverage) => `${c.source}\u0000${c.scope}`;
  const statusesByScope = new Map<string, Set<string>>();
  for (const c of all) {
    const s = statusesByScope.get(key(c)) ?? new Set<string>();
    for (const st of c.statuses.split(',').filter(Boolean)) s.add(st);
    statusesByScope.set(key(c), s);
  }
  const required = (c: ScopeCoverage) => {
    const s = statusesByScope.get(key(c));
    return !(s && s.size === 1 && s.has('not_eligible'));
  };

  const byG = (g: Granularity) => all.filter((c) => c.granularity === g);
  // Every scope not eligible (a Free-only organization, say): a known, final answer, so the period is
  // complete, with no billable usage, at each granularity that recorded it.
  const notEligibleOnly = all.length > 0 && !all.some(required);
  const completeGranularities = FINEST_FIRST.filter((g) => {
    const req = byG(g).filter(required);
    if (req.length > 0) return req.every((c) => c.complete);
    return notEligibleOnly && byG(g).some((c) => c.statuses.split(',').includes('not_eligible'));
  });
  const orgs = [...new Set(all.map((c) => c.scope))];
  const notEligible = orgs.filter((org) => all.every((c) => c.scope !== org || !required(c))).sort();

  let granularity: Granularity;
  let reason: string;
  if (notEligibleOnly && completeGranularities.length > 0) {
    granularity = completeGranularities[0]!;
    reason = 'every scope is not eligible (403 on both API versions): complete, with no billable usage';
  } else if (completeGranularities.length > 0) {
    granularity = completeGranularities[0]!;
    reason = `finest granularity completely collected for the period`;
  } else if (all.some(required)) {
    // Partial: the granularity that covers the most of the period, finer on a tie.
    let best: Granularity = 'daily';
    let bestMs = -1;
    for (const g of FINEST_FIRST) {
      const ms = byG(g)
        .filter(required)
        .reduce((a, c) => a + Math.min(c.coveredMs, rangeMs), 0);
      if (ms > bestMs) {
        best = g;
        bestMs = ms;
      }
    }
    granularity = best;
    reason = 'no granularity is completely collected for the period; using the one covering most of it';
  } else {
    const present = await store.report.tables.dataGranularities(rangeStart, rangeEnd);
    const have = new Set(present.map((p) => p.granularity));
    granularity = FINEST_FIRST.find((g) => have.has(g)) ?? 'daily';
    reason = 'no coverage recorded for the period; using the finest granularity with data';
  }
  const scopes = byG(granularity).map((c) => ({ ...c, required: required(c) }));
  const complete = completeGranularities.length > 0;
  return { complete, granularity, completeGranularities, reason, scopes, notEligible };
}
