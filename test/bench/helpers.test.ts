// The benchmark's pure helpers: the minimum-request arithmetic, the baseline's extrapolation, the
// windows, the profile summary. The benchmark itself never runs under `npm test`.
import { describe, expect, it } from 'vitest';
import { baselineSql } from '../../bench/baseline.js';
import { summariseProfile, type CpuProfile } from '../../bench/cpuprofile.js';
import {
  computeMinimum,
  DEFAULT_PAGE_SIZES,
  fewestFrameworkRequests,
  fullLastPage,
  minimumRequests,
  OUR_PAGE_SIZES,
  pagesFor,
} from '../../bench/minimum.js';
import { extrapolateBaseline, markdownTable, rateBoundS } from '../../bench/table.js';
import { benchPlan } from '../../bench/windows.js';
import { listFrameworks, listPrograms } from '../../src/sandbox/consumption.js';
import { generateWorld } from '../../src/sandbox/world.js';

describe('pages', () => {
  it('counts one page per limit items, and one request for an empty list', () => {
    expect(pagesFor(0, 100)).toBe(1);
    expect(pagesFor(1, 100)).toBe(1);
    expect(pagesFor(100, 100)).toBe(1);
    expect(pagesFor(101, 100)).toBe(2);
    expect(pagesFor(4_499, 100)).toBe(45);
  });
  it('knows an exactly full last page', () => {
    expect(fullLastPage(0, 100)).toBe(false);
    expect(fullLastPage(1000, 1000)).toBe(true);
    expect(fullLastPage(999, 1000)).toBe(false);
  });
});

describe('minimumRequests', () => {
  const now = Date.parse('2026-11-21T10:30:00Z');
  const world = generateWorld({ seed: 1, scenario: 'small', now });
  const w = { granularity: 'daily' as const, from: '2026-11-19T00:00:00Z', to: '2026-11-21T00:00:00Z' };

  it('adds pages per organization, frameworks per batch, one 403 per organization and one org listing', () => {
    const c = minimumRequests(world, [w], now, OUR_PAGE_SIZES);
    const q = { granularity: 'daily' as const, from: Date.parse(w.from), to: Date.parse(w.to), now };
    let expected = 1; // org listing
    for (const id of world.personal_org_ids) {
      const legacy = world.orgById.get(id)?.billing === 'legacy';
      const programs = listPrograms(world, legacy ? 'v1_programs' : 'v2_programs', new Set([id]), q);
      expected += 1 + Math.max(1, Math.ceil(programs.length / 100));
      if (!legacy)
        expected += Math.max(
          1,
          Math.ceil(
            listFrameworks(
              world,
              programs.map((p) => p.id),
              q,
            ).length / 1000,
          ),
        );
    }
    expect(c.total).toBe(expected);
    expect(c.forbidden).toBe(world.personal_org_ids.length);
    expect(c.orgListing).toBe(1);
  });

  it('needs more requests at the default page sizes, and fewer for a subset', () => {
    const ours = minimumRequests(world, [w], now, OUR_PAGE_SIZES);
    const naive = minimumRequests(world, [w], now, DEFAULT_PAGE_SIZES);
    const subset = minimumRequests(
      world,
      [w],
      now,
      DEFAULT_PAGE_SIZES,
      new Map(world.personal_org_ids.map((id) => [id, 2])),
    );
    expect(naive.total).toBeGreaterThan(ours.total);
    expect(subset.total).toBeLessThan(naive.total);
    expect(subset.programs).toBe(2 * world.personal_org_ids.length);
  });
});

describe('fewestFrameworkRequests', () => {
  const chunked = (counts: number[]) => {
    let pages = 0;
    for (let i = 0; i < counts.length; i += 100)
      pages += pagesFor(
        counts.slice(i, i + 100).reduce((a, b) => a + b, 0),
        1000,
      );
    return pages;
  };

  it('asks 99 programs of 10 frameworks at a time: 100 would fill the page exactly and may cost an empty one', () => {
    const tens = new Array<number>(300).fill(10);
    expect(chunked(tens)).toBe(3); // three requests, each exactly full
    expect(fewestFrameworkRequests(tens, 1000, 100)).toBe(4); // 99, 99, 99 and 3 programs
    expect(fewestFrameworkRequests(new Array<number>(4_499).fill(10), 1000, 100)).toBe(46);
  });

  it('is one page per 1,000 frameworks of each 100 programs when no batch fills its page exactly', () => {
    const counts = Array.from({ length: 250 }, (_, i) => 2 + (i % 9));
    expect(fewestFrameworkRequests(counts, 1000, 100)).toBe(chunked(counts));
  });

  it('charges the possible empty page where no batching avoids it, and nothing for no programs', () => {
    expect(fewestFrameworkRequests([2000], 1000, 100)).toBe(3);
    expect(fewestFrameworkRequests([], 1000, 100)).toBe(0);
  });

  it("gives the large scenario's 30-day window two more frameworks requests than batches of 100 would; the naive count keeps its fixed batches", () => {
    const args = {
      scenario: 'large' as const,
      now: '2026-11-21T10:30:00Z',
      windows: [benchPlan(Date.parse('2026-11-21T10:30:00Z'), 30, 48).daily],
    };
    const m = computeMinimum(args);
    expect(m.ours.frameworks).toBe(89_980);
    // 2 organizations × 4,499 programs of 10 frameworks: 46 requests each, not 45; programs pages 45 + 45 + 10; 3 403s; 1 org listing.
    expect(m.ours.total).toBe(92 + 100 + 3 + 1);
    expect(m.ours.fullLastPages).toBe(0);
    expect(m.naive.fullLastPages).toBeGreaterThan(0); // fixed batches of 10 programs: 100 frameworks, a full default page
  });

  it('counts a set-up collection at the clock it ran at, in the world generated at the start', () => {
    const start = Date.parse('2026-11-21T10:30:00Z');
    const world = generateWorld({ seed: 1, scenario: 'small', now: start });
    // The clock an hour before the newest framework of a current organization existed: it is not listed then.
    const current = new Set(world.personal_org_ids.filter((id) => world.orgById.get(id)?.billing === 'current'));
    const newest = Math.max(
      ...world.frameworks
        .filter((f) => current.has(world.programById.get(f.program_id)!.org_id))
        .map((f) => f.created_at),
    );
    const clock = newest - 3_600_000;
    const windows = [benchPlan(clock, 2, 3).daily];
    const earlier = computeMinimum({
      scenario: 'small',
      now: new Date(start).toISOString(),
      clock: new Date(clock).toISOString(),
      windows,
    });
    expect(earlier.ours).toEqual(minimumRequests(world, windows, clock));
    expect(earlier.ours.frameworks).toBeLessThan(minimumRequests(world, windows, start).frameworks);
  });
});

describe('extrapolateBaseline', () => {
  it('scales waiting by requests and the rest by values', () => {
    const est = extrapolateBaseline(
      { requests: 10, rows: 1000, httpS: 2, wallS: 3, cpuS: 0.5 },
      { full: 200, subset: 8 },
      100_000,
    );
    expect(est.requests).toBeCloseTo(250); // 200 counted pages × 10/8 measured per counted
    expect(est.wallS).toBeCloseTo(0.2 * 250 + 0.001 * 100_000);
    expect(est.cpuS).toBeCloseTo(50);
  });
  it('is the measurement itself when the subset is everything', () => {
    const est = extrapolateBaseline(
      { requests: 10, rows: 1000, httpS: 2, wallS: 3, cpuS: 0.5 },
      { full: 8, subset: 8 },
      1000,
    );
    expect(est).toEqual({ requests: 10, wallS: 3, cpuS: 0.5 });
  });
});

describe('rateBoundS', () => {
  it('is requests over the per-second rate', () => {
    expect(rateBoundS(700, 700)).toBe(60);
    expect(rateBoundS(388, 700)).toBeCloseTo(33.26, 2);
  });
});

describe('benchPlan', () => {
  it('collects the previous month when the daily window does not cover it', () => {
    const p = benchPlan(Date.parse('2026-11-21T10:30:00Z'), 30, 48);
    expect(p.daily).toEqual({ granularity: 'daily', from: '2026-10-22T00:00:00Z', to: '2026-11-21T00:00:00Z' });
    expect(p.hourly).toEqual({ granularity: 'hourly', from: '2026-11-19T10:00:00Z', to: '2026-11-21T10:00:00Z' });
    expect(p.month).toBe('2026-10');
    expect(p.monthWindow).toEqual({ granularity: 'monthly', from: '2026-10-01T00:00:00Z', to: '2026-11-01T00:00:00Z' });
  });
  it('reuses the daily window when it covers the month', () => {
    const p = benchPlan(Date.parse('2026-12-01T10:30:00Z'), 30, 48);
    expect(p.month).toBe('2026-11');
    expect(p.monthWindow).toBeNull();
  });
});

describe('summariseProfile', () => {
  it('attributes self time to the top frame and total time to every frame on the stack', () => {
    const frame = (id: number, name: string, children: number[] = []) => ({
      id,
      callFrame: { functionName: name, url: `file:///x/src/${name}.js`, lineNumber: 0 },
      children,
    });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2] },
        frame(2, 'outer', [3]),
        frame(3, 'inner'),
      ],
      samples: [3, 3, 2, 3],
      timeDeltas: [1000, 1000, 1000, 1000],
      startTime: 0,
      endTime: 4000,
    };
    const s = summariseProfile(profile, 5);
    expect(s.sampledMs).toBe(4);
    expect(s.functions[0]).toMatchObject({ where: 'inner (src/inner.js:1)', selfMs: 3, totalMs: 3 });
    expect(s.functions[1]).toMatchObject({ where: 'outer (src/outer.js:1)', selfMs: 1, totalMs: 4, totalShare: 1 });
  });
});

describe('baselineSql', () => {
  it('splits the schema from the named INSERTs', () => {
    const sql = baselineSql();
    expect(sql.schema).toMatch(/CREATE TABLE IF NOT EXISTS naive_usage_program/);
    expect(Object.keys(sql.named).sort()).toEqual(['insert_framework', 'insert_program']);
    expect(sql.named.insert_program).toMatch(/\$14/);
  });
});

describe('markdownTable', () => {
  it('escapes pipes in cells', () => {
    expect(markdownTable(['a'], [['x|y']])).toBe('| a |\n|---|\n| x\\|y |');
  });
});
