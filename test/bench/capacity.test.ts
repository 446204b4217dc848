// The capacity figures: span over bound, the busiest route's bound, and the fastest rate that kept within
// the goal. Pure arithmetic over what phases measured; no benchmark runs here.
import { describe, expect, it } from 'vitest';
import { emptyStats } from '../../src/sandbox/stats.js';
import {
  capacityRate,
  capacityRow,
  endOfPhaseS,
  spanOverBound,
  startupS,
  type CapacityRow,
  type CollectPhase,
} from '../../bench/table.js';

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
