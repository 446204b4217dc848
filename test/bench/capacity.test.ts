// The capacity figures: span over bound, the busiest route's bound, and the fastest rate that kept within
// the goal. Pure arithmetic over what phases measured; no benchmark runs here.
import { describe, expect, it } from 'vitest';
import { emptyStats } from '../../src/sandbox/stats.js';
import {
  benchTable,
  capacityRate,
  capacityRow,
  endOfPhaseS,
  spanOverBound,
  startupS,
  type BenchReport,
  type CapacityRow,
  type CollectPhase,
} from '../../bench/table.js';
import type { RequestCount } from '../../bench/minimum.js';

function phase(over: Partial<CollectPhase>): CollectPhase {
  return {
    name: 'daily 2 d',
    window: { granularity: 'daily', from: '2026-11-19T00:00:00Z', to: '2026-11-21T00:00:00Z' },
    requests: 700,
    retries: 0,
    throttled: 0,
    rows: 2_000_000,
    exitCode: 0,
    sandbox: emptyStats(),
    sandboxCpuS: null,
    minimum: 700,
    wallS: 70,
    cpuS: 14,
    peakRssMb: 200,
    httpSpanS: 63,
    atPeak: { heapMb: 0, externalMb: 0, otherMb: 0 },
    ...over,
  };
}

function row(perMinute: number, spanOverBound: number | null, over: Partial<CapacityRow> = {}): CapacityRow {
  return { ...capacityRow(phase({}), perMinute, 40), spanOverBound, ...over };
}

describe('spanOverBound', () => {
  it('divides the summed request spans by the bound of the summed minimum requests', () => {
    // 700 + 350 minimum requests at 700/min: 90 s; spans 63 + 36 s.
    const phases = [phase({}), phase({ minimum: 350, httpSpanS: 36 })];
    expect(spanOverBound(phases, 700)).toBeCloseTo(99 / 90, 9);
    expect(spanOverBound(phases, 1400)).toBeCloseTo(99 / 45, 9);
  });
  it('is unknown when a phase sent nothing or has no minimum', () => {
    expect(spanOverBound([phase({ httpSpanS: null })], 700)).toBeNull();
    expect(spanOverBound([phase({ minimum: null })], 700)).toBeNull();
    expect(spanOverBound([], 700)).toBeNull();
  });
});

describe('capacityRow', () => {
  it('gives the bound at the rate, CPU per request and per million values, and the busiest route at its cap', () => {
    const sandbox = { ...emptyStats(), byRoute: { programs: 100, frameworks: 600 } };
    const r = capacityRow(phase({ sandbox, timing: { firstRequestS: 0.8, lastAnswerS: 64, endS: 66.5 } }), 1400, 40);
    expect(r.boundS).toBe(30);
    expect(r.spanOverBound).toBeCloseTo(63 / 30, 9);
    expect(r.routeBoundS).toBe(15);
    expect(r.cpuMsPerRequest).toBe(20);
    expect(r.cpuSPerMillionValues).toBe(7);
    expect(r.startupS).toBe(0.8);
    expect(r.endOfPhaseS).toBe(2.5);
  });
});

describe('startupS and endOfPhaseS', () => {
  it('takes the longest start-up and sums the ends of the phases', () => {
    const phases = [
      phase({ timing: { firstRequestS: 0.5, lastAnswerS: 10, endS: 11 } }),
      phase({ timing: { firstRequestS: 0.75, lastAnswerS: 20, endS: 20.5 } }),
    ];
    expect(startupS(phases)).toBe(0.75);
    expect(endOfPhaseS(phases)).toBe(1.5);
    expect(endOfPhaseS([...phases, phase({})])).toBeNull();
  });
});

describe('capacityRate', () => {
  it('is the fastest rate at which every collection stayed within 1.05x its bound', () => {
    const rows = [row(700, 1.01), row(700, 1.02), row(1400, 1.04), row(1400, 1.05), row(2800, 1.3), row(2800, 1.01)];
    expect(capacityRate(rows)).toBe(1400);
  });
  it('does not count a rate with a violation, a failed exit or an unknown span', () => {
    expect(capacityRate([row(700, 1.0), row(1400, 1.0, { violations: 1 })])).toBe(700);
    expect(capacityRate([row(700, 1.0), row(1400, 1.0, { exitCode: 1 })])).toBe(700);
    expect(capacityRate([row(700, 1.0), row(1400, null)])).toBe(700);
  });
  it('is null when no rate kept within the goal', () => {
    expect(capacityRate([row(700, 1.2)])).toBeNull();
    expect(capacityRate([])).toBeNull();
  });
});

describe('benchTable', () => {
  const count = (total: number): RequestCount => ({
    pages: total,
    forbidden: 0,
    orgListing: 0,
    fullLastPages: 0,
    programs: 0,
    frameworks: 0,
    total,
  });
  function report(over: Partial<BenchReport>): BenchReport {
    return {
      mode: 'full',
      scenario: 'large',
      latencyMs: 100,
      now: '2026-11-21T10:30:00Z',
      date: '2026-11-29T01:00:00Z',
      machine: '2 cores',
      command: 'npm run bench --',
      perMinute: 700,
      minimum: { ours: count(1400), perWindow: [count(700), count(700)], naive: count(1400), organizations: [] },
      collections: [
        phase({
          timing: { firstRequestS: 0.35, lastAnswerS: 64, endPhasesS: { checkpoint: 65, publishing: 66 }, endS: 67 },
        }),
        phase({ name: 'hourly 3 h', httpSpanS: 66, timing: { firstRequestS: 0.5, lastAnswerS: 67, endS: 68 } }),
      ],
      month: null,
      report: { month: '2026-10', wallS: 61, cpuS: 60, peakRssMb: 423, rows: {}, files: [], partial: false },
      storeLoad: { rows: 1, append_values_per_s: 1, end_to_end_values_per_s: 1, peak_rss_mb: 1 },
      baseline: null,
      baselinePrograms: 0,
      sandboxPeakRssMb: null,
      ...over,
    };
  }
  const line = (table: string, figure: string) => table.split('\n').find((l) => l.startsWith(`| ${figure}`));

  it('gives start-up, span / bound and the end of phase per collection, each with its goal', () => {
    const t = benchTable(report({}));
    expect(line(t, 'start-up to first request')).toMatch(
      /daily 2 d 0\.35 s; hourly 3 h 0\.50 s \| ≤ 0\.4 s \| \*\*missed\*\*: 0\.50 s/,
    );
    // 700 minimum requests at 700/min: 60 s; spans 63 and 66 s.
    expect(line(t, 'request span / bound per collection')).toMatch(
      /daily 2 d 63\.0 \/ 60\.0 s = 1\.05; hourly 3 h 66\.0 \/ 60\.0 s = 1\.10 \| ≤ 1\.05 \| \*\*missed\*\*: 1\.10×/,
    );
    expect(line(t, 'end of phase')).toContain(
      'daily 2 d 1.00 / 1.00 / 0.00 / 1.00 s; hourly 3 h 1.00 / 0.00 / 0.00 / 0.00 s',
    );
    // 14 CPU-s for 2 million values per collection.
    expect(line(t, 'collector CPU per million values')).toMatch(/\| 7\.00 \| ≤ 1\.0 s \| \*\*missed\*\*/);
    expect(line(t, 'report 2026-10')).toContain('61.0 s, 423 MB peak RSS');
    expect(line(t, '`npm test` wall time')).toBeUndefined();
  });
  it('gives the suite its wall time against 4 minutes, and a failed suite as failed', () => {
    const suite = { wallS: 230, exitCode: 0, summary: ['Test Files  100 passed (100)'], log: 'npm-test.log' };
    expect(line(benchTable(report({ suite })), '`npm test` wall time')).toContain(
      '230.0 s, exit 0 (Test Files  100 passed (100)) | ≤ 240 s | met',
    );
    expect(line(benchTable(report({ suite: { ...suite, wallS: 300, exitCode: 1 } })), '`npm test`')).toContain(
      '**failed**',
    );
  });
});
