// The limiter's sliding windows, with an injected time: never more than the cap in any window,
// and Retry-After says when the next slot frees.
import { describe, expect, it } from 'vitest';
import { RateLimits, SlidingWindowLog } from '../../src/sandbox/limits.js';
import { SandboxClock } from '../../src/sandbox/clock.js';
import { FaultInjector } from '../../src/sandbox/faults.js';

describe('sliding-window limits', () => {
  it('accepts exactly the cap in any rolling window, including across a boundary', () => {
    const log = new SlidingWindowLog(3, 1000);
    const accepted: number[] = [];
    for (let t = 0; t < 5000; t += 70) {
      if (log.waitMs(t) === 0) {
        log.record(t);
        accepted.push(t);
      }
    }
    for (const t of accepted) expect(accepted.filter((x) => x > t - 1000 && x <= t).length).toBeLessThanOrEqual(3);
    // A fixed window would let 6 through around t=1000; the log lets 3 per 1000 ms.
    expect(accepted.filter((x) => x >= 500 && x < 1500).length).toBeLessThanOrEqual(3);
    expect(accepted.length).toBeGreaterThanOrEqual(14);
  });

  it('reports which limit refused and how long until a slot frees', () => {
    const limits = new RateLimits(5, 2);
    expect(limits.check('k', '/a', 0).ok).toBe(true);
    expect(limits.check('k', '/a', 10).ok).toBe(true);
    const refused = limits.check('k', '/a', 20);
    expect(refused).toEqual({ ok: false, retryAfterSeconds: 1, perMinute: false, perSecond: true });
    expect(limits.check('k', '/b', 30).ok).toBe(true);
    expect(limits.check('k', '/c', 40).ok).toBe(true);
    expect(limits.check('k', '/d', 50).ok).toBe(true);
    const minute = limits.check('k', '/e', 1000);
    expect(minute).toEqual({ ok: false, retryAfterSeconds: 59, perMinute: true, perSecond: false });
    // Refused requests do not count: after the oldest accepted one leaves the minute, one more fits.
    expect(limits.check('k', '/e', 60_000).ok).toBe(true);
    expect(limits.check('other', '/f', 60_001).ok).toBe(true);
  });
});

describe('clock and faults', () => {
  it('the clock advances with real time or stays where it is set', () => {
    let real = 1000;
    const moving = new SandboxClock(5_000, true, () => real);
    const frozen = new SandboxClock(5_000, false, () => real);
    real += 250;
    expect(moving.now()).toBe(5_250);
    expect(frozen.now()).toBe(5_000);
    moving.set(9_000);
    real += 10;
    expect(moving.now()).toBe(9_010);
  });

  it('faults follow the seed and the rates', () => {
    const draws = (seed: number): string[] => {
      const f = new FaultInjector(seed, { rate503: 0.1, rate423: 0.1, rate429: 0.1, rateDrop: 0.1 });
      return Array.from({ length: 2000 }, () => f.draw());
    };
    const a = draws(3);
    expect(draws(3)).toEqual(a);
    expect(draws(4)).not.toEqual(a);
    for (const kind of ['503', '423', '429', 'drop']) {
      const n = a.filter((x) => x === kind).length;
      expect(n).toBeGreaterThan(140);
      expect(n).toBeLessThan(260);
    }
  });
});
