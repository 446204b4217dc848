// The generator: closed-form bucket values equal hour-by-hour sums, settling follows the clock,
// and the scenarios hold the facts the other tests and the demo rely on.
import { describe, expect, it } from 'vitest';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import {
  frameworkSeries,
  hourValue,
  maxFinal,
  programSeries,
  reportedValue,
  settleSteps,
  sumFinal,
  type Series,
} from '../../src/sandbox/usage.js';
import { generateWorld, type Program } from '../../src/sandbox/world.js';
import { DAY, HOUR } from '../support/sandboxClient.js';

const NOW = Date.UTC(2025, 8, 20, 10, 37);
const world = generateWorld({ seed: 7, scenario: 'small', now: NOW });
const current = world.programs.filter((p) => world.orgById.get(p.org_id)?.billing === 'current');
const legacy = world.programs.filter((p) => world.orgById.get(p.org_id)?.billing === 'legacy');

function bruteSum(parts: Series[], a: number, b: number): number {
  let t = 0;
  for (let h = a; h < b; h += HOUR) for (const s of parts) t += hourValue(s, h);
  return t;
}

describe('closed-form values', () => {
  it('a range sum equals the sum of its hourly values, for every metric and ragged bounds', () => {
    const a0 = Date.UTC(2025, 5, 3, 5);
    let checked = 0;
    for (const p of [...current.slice(0, 5), ...legacy.slice(0, 3)]) {
      const metrics = current.includes(p) ? V2_PROGRAM_METRICS : V1_METRICS;
      for (const [i, m] of metrics.entries()) {
        const parts = programSeries(p, world.frameworksByProgram.get(p.id) ?? [], m);
        const a = a0 + i * 7 * HOUR;
        const b = a + (40 + i * 13) * DAY + 5 * HOUR;
        const closed = parts.reduce((t, s) => t + sumFinal(s, a, b), 0);
        expect(closed).toBe(bruteSum(parts, a, b));
        checked += closed > 0 ? 1 : 0;
      }
    }
    expect(checked).toBeGreaterThan(40);
  });

  it('a gauge bucket is the max of its hours, never the sum', () => {
    const p = legacy[0] as Program;
    const s = programSeries(p, [], 'synthetic_storage_size_bytes')[0] as Series;
    const a = Date.UTC(2025, 6, 1);
    const b = Date.UTC(2025, 7, 1);
    let max = 0;
    for (let h = a; h < b; h += HOUR) max = Math.max(max, hourValue(s, h));
    expect(maxFinal(s, a, b)).toBe(max);
    expect(reportedValue([s], a, b, NOW, true)).toBe(max);
  });

  it('a framework has usage only during its life and from the framework data start', () => {
    const deleted = world.frameworks.find(
      (f) =>
        f.deleted_at !== undefined &&
        f.deleted_at > world.framework_data_start + 10 * DAY &&
        f.created_at < world.framework_data_start,
    );
    expect(deleted).toBeDefined();
    const f = deleted!;
    const p = world.programById.get(f.program_id)!;
    const s = frameworkSeries(p, f, 'compute_unit_seconds', world.framework_data_start);
    expect(sumFinal(s, world.framework_data_start - 30 * DAY, world.framework_data_start)).toBe(0);
    const end = Math.ceil(f.deleted_at! / HOUR) * HOUR; // bounds are whole hours
    expect(sumFinal(s, end, end + 40 * DAY)).toBe(0);
    expect(sumFinal(s, world.framework_data_start, end)).toBeGreaterThan(0);
  });

  it('recent hours settle in 15-minute steps over three hours', () => {
    const p = current[1] as Program;
    const parts = programSeries(p, world.frameworksByProgram.get(p.id) ?? [], 'compute_unit_seconds');
    const h = Date.UTC(2025, 8, 20, 8); // closed at 09:00
    const final = bruteSum(parts, h, h + HOUR);
    expect(final).toBeGreaterThan(0);
    const at = (now: number): number => reportedValue(parts, h, h + HOUR, now, false) as number;
    expect(settleSteps(h, h + HOUR + 29 * 60_000)).toBe(1);
    expect(at(h + 30 * 60_000)).toBe(0); // still open
    expect(at(h + HOUR + 16 * 60_000)).toBe(Math.floor(final / 12));
    expect(at(h + HOUR + 95 * 60_000)).toBe(Math.floor((final * 6) / 12));
    expect(at(h + 4 * HOUR)).toBe(final);
    expect(at(h + 40 * HOUR)).toBe(final);
  });

  it('a program value of a framework metric is its frameworks plus a remainder', () => {
    const p = current.find((x) => (world.frameworksByProgram.get(x.id) ?? []).length >= 3)!;
    const fws = world.frameworksByProgram.get(p.id)!;
    for (const m of V2_FRAMEWORK_METRICS) expect(programSeries(p, fws, m)).toHaveLength(fws.length + 1);
  });
});

describe('scenarios', () => {
  it('is deterministic for a seed and differs between seeds', () => {
    const again = generateWorld({ seed: 7, scenario: 'small', now: NOW });
    expect(again.programs.map((p) => p.id)).toEqual(world.programs.map((p) => p.id));
    expect(again.frameworks.map((f) => [f.id, f.created_at, f.deleted_at])).toEqual(
      world.frameworks.map((f) => [f.id, f.created_at, f.deleted_at]),
    );
    expect(generateWorld({ seed: 8, now: NOW }).programs[0]?.id).not.toBe(world.programs[0]?.id);
  });

  it('small: two member organisations (current and legacy) and one the personal key is not a member of', () => {
    expect(world.personal_org_ids).toHaveLength(2);
    expect(world.personal_org_ids.map((id) => world.orgById.get(id)?.billing).sort()).toEqual(['current', 'legacy']);
    expect(world.orgs.filter((o) => !world.personal_org_ids.includes(o.id))).toHaveLength(1);
    const member = world.programs.filter((p) => world.personal_org_ids.includes(p.org_id));
    expect(member.length).toBeGreaterThanOrEqual(18);
    expect(Math.min(...world.programs.map((p) => p.created_at))).toBeLessThan(Date.UTC(2025, 5, 1));
    expect(world.framework_data_start).toBeGreaterThan(Math.min(...world.programs.map((p) => p.created_at)) + 60 * DAY);
  });

  it('plans: free, launch, scale and one enterprise program on current; legacy plans on legacy', () => {
    const plans = (ps: Program[]): Set<string> => new Set(ps.flatMap((p) => p.periods.map((x) => x.plan)));
    expect([...plans(current)].sort()).toEqual(expect.arrayContaining(['enterprise', 'free', 'launch', 'scale']));
    expect(current.filter((p) => p.periods.some((x) => x.plan === 'enterprise'))).toHaveLength(1);
    for (const plan of plans(legacy)) expect(plan.startsWith('legacy_')).toBe(true);
  });

  it('every calendar month has a mid-month plan change on a current program, split and whole', () => {
    for (
      let t = Date.UTC(2024, 3, 1);
      t < Date.UTC(2031, 0, 1);
      t = Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1)
    ) {
      const end = Date.UTC(new Date(t).getUTCFullYear(), new Date(t).getUTCMonth() + 1, 1);
      const changers = current.filter((p) =>
        p.periods.some((x, i) => i > 0 && x.start > t && x.start < end && x.start % DAY !== 0),
      );
      expect(changers.some((p) => p.split_at_plan_change)).toBe(true);
      expect(changers.some((p) => !p.split_at_plan_change)).toBe(true);
    }
  });

  it('one program was deleted last month; some frameworks are deleted; snapshots are manual and scheduled', () => {
    const deleted = current.filter((p) => p.deleted_at !== undefined);
    expect(deleted).toHaveLength(1);
    expect(new Date(deleted[0]!.deleted_at!).getUTCMonth()).toBe(new Date(NOW).getUTCMonth() - 1);
    expect(
      world.frameworks.some(
        (f) => f.deleted_at !== undefined && world.programById.get(f.program_id)?.deleted_at === undefined,
      ),
    ).toBe(true);
    expect(world.snapshots.some((s) => s.manual)).toBe(true);
    expect(world.snapshots.some((s) => !s.manual && s.expires_at! > NOW)).toBe(true);
  });

  it('bigint: hourly byte-month values pass 2^53 while a whole month stays within int64', () => {
    const big = generateWorld({ seed: 7, scenario: 'bigint', now: NOW });
    const p = big.programs.find(
      (x) => x.big_factor !== undefined && x.periods.length === 1 && x.deleted_at === undefined,
    )!;
    const parts = programSeries(p, big.frameworksByProgram.get(p.id) ?? [], 'root_branch_bytes_month');
    const factor = p.big_factor!.root_branch_bytes_month!;
    let maxHour = 0n;
    for (let h = Date.UTC(2025, 7, 1); h < Date.UTC(2025, 7, 8); h += HOUR) {
      const v = reportedValue(parts, h, h + HOUR, NOW, false, factor) as bigint;
      if (v > maxHour) maxHour = v;
    }
    expect(maxHour > 2n ** 53n).toBe(true);
    const month = reportedValue(parts, Date.UTC(2025, 6, 1), Date.UTC(2025, 7, 1), NOW, false, factor) as bigint;
    expect(month < 2n ** 63n - 1n).toBe(true);
  });

  it('large: 10,000 member programs and 100,000 frameworks', () => {
    const large = generateWorld({ seed: 1, scenario: 'large', now: NOW });
    const member = large.programs.filter((p) => large.personal_org_ids.includes(p.org_id));
    expect(member).toHaveLength(10_000);
    const memberIds = new Set(member.map((p) => p.id));
    expect(large.frameworks.filter((f) => memberIds.has(f.program_id))).toHaveLength(100_000);
  });
});
