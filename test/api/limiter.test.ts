import { describe, expect, it } from 'vitest';
import { BURST_PER_SECOND_PER_ROUTE, RATE_LIMIT_PER_MINUTE } from '../../src/contract/api.js';
import { RateLimiter, RECOVERY_INTERVAL_MS, THROTTLE_FACTOR } from '../../src/api/limiter.js';

/**
 * A simulated clock: the limiter's sleep advances it, so minutes pass in milliseconds. The clock moves on
 * a later turn of the event loop, after every granted acquirer has run and noted the time it was let through.
 * `lateMs`: each sleep ends that much after it was due, as on a busy event loop.
 */
function fakeTime(lateMs = 0) {
  const t = { now: 0 };
  return {
    t,
    clock: () => t.now,
    sleep: (ms: number) =>
      new Promise<void>((resolve) =>
        setImmediate(() => {
          t.now += ms + lateMs;
          resolve();
        }),
      ),
  };
}

interface Send {
  t: number;
  route: string;
}

/** Most sends in any half-open window [t_i, t_i + windowMs) that starts at a send. */
function maxInWindow(times: number[], windowMs: number): number {
  let max = 0;
  let j = 0;
  for (let i = 0; i < times.length; i++) {
    if (j < i) j = i;
    while (j < times.length && (times[j] as number) < (times[i] as number) + windowMs) j++;
    max = Math.max(max, j - i);
  }
  return max;
}

function minGap(times: number[]): number {
  let min = Infinity;
  for (let i = 1; i < times.length; i++) min = Math.min(min, (times[i] as number) - (times[i - 1] as number));
  return min;
}

/** `workers` concurrent loops, each acquiring on its own route until the simulated time reaches `untilMs`. */
async function run(
  limiter: RateLimiter,
  time: ReturnType<typeof fakeTime>,
  opts: { workers: number; routes: string[]; untilMs: number; onSend?: (s: Send) => void },
): Promise<Send[]> {
  const sends: Send[] = [];
  await Promise.all(
    Array.from({ length: opts.workers }, async (_, w) => {
      const route = opts.routes[w % opts.routes.length] as string;
      while (time.t.now < opts.untilMs) {
        await limiter.acquire(route);
        const s = { t: time.t.now, route };
        sends.push(s);
        opts.onSend?.(s);
      }
    }),
  );
  return sends;
}

describe('RateLimiter', () => {
  it('holds 700/min and 40/s/route over three simulated minutes, paced evenly', async () => {
    const time = fakeTime();
    const headroom = 0.05;
    const limiter = new RateLimiter({
      perMinute: RATE_LIMIT_PER_MINUTE,
      perSecondPerRoute: BURST_PER_SECOND_PER_ROUTE,
      headroom,
      clock: time.clock,
      sleep: time.sleep,
    });
    const routes = ['/consumption_history/v2/programs', '/consumption_history/v2/frameworks', '/programs'];
    const sends = await run(limiter, time, { workers: 24, routes, untilMs: 180_000 });
    const times = sends.map((s) => s.t);

    const minuteCap = Math.floor(RATE_LIMIT_PER_MINUTE * (1 - headroom));
    expect(maxInWindow(times, 60_000)).toBeLessThanOrEqual(minuteCap);
    for (const route of routes) {
      const rt = sends.filter((s) => s.route === route).map((s) => s.t);
      expect(maxInWindow(rt, 1_000)).toBeLessThanOrEqual(BURST_PER_SECOND_PER_ROUTE);
    }
    // Even pacing: never two sends closer than the spacing of the target rate (no bursts, not even at the start).
    expect(minGap(times)).toBeGreaterThanOrEqual(60_000 / (RATE_LIMIT_PER_MINUTE * (1 - headroom)) - 1e-6);
    // ...and not needlessly slow: close to the target rate over the three minutes.
    expect(sends.length).toBeGreaterThanOrEqual(minuteCap * 3 - 2);
    expect(limiter.stats.acquired).toBe(sends.length);
    expect(limiter.stats.currentPerMinute).toBeCloseTo(RATE_LIMIT_PER_MINUTE * (1 - headroom));
    expect(limiter.stats.waitedMs).toBeGreaterThan(170_000);
  });

  it('holds the per-route second window when the per-key rate is not the binding one', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({
      perMinute: 60_000,
      perSecondPerRoute: 40,
      headroom: 0.05,
      clock: time.clock,
      sleep: time.sleep,
    });
    const sends = await run(limiter, time, { workers: 16, routes: ['/a', '/b'], untilMs: 5_000 });
    for (const route of ['/a', '/b']) {
      const rt = sends.filter((s) => s.route === route).map((s) => s.t);
      expect(maxInWindow(rt, 1_000)).toBeLessThanOrEqual(Math.floor(40 * 0.95));
      expect(minGap(rt)).toBeGreaterThanOrEqual(1_000 / (40 * 0.95) - 1e-6);
      // Both routes progress side by side at close to their own cap.
      expect(rt.length).toBeGreaterThanOrEqual(5 * 38 - 2);
    }
  });

  it('after a 429 pauses, lowers the rate, and recovers gradually to the configured rate, never above', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({
      perMinute: 700,
      perSecondPerRoute: 40,
      headroom: 0.05,
      clock: time.clock,
      sleep: time.sleep,
    });
    const target = 700 * 0.95;
    const rates: Array<{ t: number; rate: number }> = [];
    let throttled = false;
    const sends = await run(limiter, time, {
      workers: 8,
      routes: ['/r'],
      untilMs: 150_000,
      onSend: (s) => {
        rates.push({ t: s.t, rate: limiter.stats.currentPerMinute });
        if (!throttled && s.t >= 30_000) {
          throttled = true;
          limiter.onThrottled(5_000);
          // Further 429s from requests already in flight do not cut the rate again.
          limiter.onThrottled(5_000);
          limiter.onThrottled(5_000);
        }
      },
    });
    const times = sends.map((s) => s.t);
    const cutAt = times.find((t) => t >= 30_000) as number;

    // Paused: nothing sent for the Retry-After time.
    expect(times.filter((t) => t > cutAt && t < cutAt + 5_000)).toEqual([]);
    expect(limiter.stats.throttles).toBe(3);
    // Lowered once (not three times), so sends right after the pause are spaced at the lowered rate.
    const lowered = target * THROTTLE_FACTOR;
    const after = times.filter((t) => t >= cutAt + 5_000 && t < cutAt + 9_000);
    expect(minGap(after)).toBeGreaterThanOrEqual(60_000 / lowered - 1e-6);
    expect(minGap(after)).toBeLessThan(60_000 / lowered + 1);
    // Recovers in steps (no jump back), reaches the configured rate again, and never exceeds it.
    const rateAt = (t: number) => [...rates].reverse().find((r) => r.t <= t)?.rate as number;
    expect(rateAt(cutAt + 5_500)).toBeCloseTo(lowered);
    expect(rateAt(cutAt + RECOVERY_INTERVAL_MS + 500)).toBeCloseTo(lowered + target * 0.05);
    expect(rateAt(cutAt + RECOVERY_INTERVAL_MS * 2 + 500)).toBeCloseTo(lowered + target * 0.1);
    expect(rateAt(149_000)).toBeCloseTo(target);
    expect(Math.max(...rates.map((r) => r.rate))).toBeLessThanOrEqual(target + 1e-9);
    // The rolling minute never exceeds the cap, before, during or after the cut.
    expect(maxInWindow(times, 60_000)).toBeLessThanOrEqual(Math.floor(target));
  });

  it('a 429 without Retry-After still pauses briefly', async () => {
    const time = fakeTime();
    const limiter = new RateLimiter({
      perMinute: 6_000,
      perSecondPerRoute: 100,
      headroom: 0.05,
      clock: time.clock,
      sleep: time.sleep,
    });
    await limiter.acquire('/r');
    limiter.onThrottled();
    await limiter.acquire('/r');
    expect(time.t.now).toBeGreaterThanOrEqual(1_000);
  });

  it('caps the pause of a Retry-After of a day at maxPauseMs (60 s by default)', async () => {
    for (const [maxPauseMs, expected] of [
      [undefined, 60_000],
      [5_000, 5_000],
    ] as const) {
      const time = fakeTime();
      const limiter = new RateLimiter({
        perMinute: 6_000,
        perSecondPerRoute: 100,
        headroom: 0.05,
        clock: time.clock,
        sleep: time.sleep,
        ...(maxPauseMs ? { maxPauseMs } : {}),
      });
      await limiter.acquire('/r');
      limiter.onThrottled(86_400_000);
      const before = time.t.now;
      await limiter.acquire('/r');
      expect(time.t.now - before).toBeGreaterThanOrEqual(expected);
      expect(time.t.now - before).toBeLessThan(expected + 1_000);
    }
  });

  it('serves concurrent acquirers first come, first served, across routes', async () => {
    const time = fakeTime();
    // One per second per route: the second '/a' must wait a second, and '/b', asked after it, waits behind it.
    const limiter = new RateLimiter({
      perMinute: 60_000,
      perSecondPerRoute: 1,
      headroom: 0.05,
      clock: time.clock,
      sleep: time.sleep,
    });
    const order: string[] = [];
    const calls = ['a1', 'a2', 'b1', 'a3', 'c1', 'b2'].map((name) =>
      limiter.acquire('/' + name[0]).then(() => order.push(name)),
    );
    await Promise.all(calls);
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'c1', 'b2']);
  });

  it('lets a waiter of higher priority go ahead of lower ones already waiting, but never twice in a row, first come first served within a priority', async () => {
    const time = fakeTime();
    // One send per second in all: every acquirer after the first waits, so the order is the limiter's.
    const limiter = new RateLimiter({
      perMinute: 60,
      perSecondPerRoute: 1_000,
      headroom: 0,
      clock: time.clock,
      sleep: time.sleep,
    });
    const order: string[] = [];
    const waiters: [name: string, priority: number][] = [
      ['f1', 0],
      ['f2', 0],
      ['f3', 0],
      ['p1', 1],
      ['f4', 0],
      ['p2', 1],
      ['p3', 1],
    ];
    const calls = waiters.map(([name, priority]) =>
      limiter.acquire(name.startsWith('p') ? '/programs' : '/frameworks', priority).then(() => order.push(name)),
    );
    await Promise.all(calls);
    // f1 was granted at once; p1 then goes ahead of f2, f3 and f4, but the lower ones are not starved:
    // while both wait, grants alternate, each in its own order; p3 then follows p2, nothing lower waiting.
    expect(order).toEqual(['f1', 'p1', 'f2', 'p2', 'f3', 'p3', 'f4']);
  });

  it('keeps the rate when the pump wakes late: a send is paced from when it was due, never closer than half an interval', async () => {
    // A busy event loop wakes the pump late: each sleep here ends 30 ms after it was due.
    const time = fakeTime(30);
    const limiter = new RateLimiter({
      perMinute: 600,
      perSecondPerRoute: 1_000,
      headroom: 0,
      clock: time.clock,
      sleep: time.sleep,
    });
    const times: number[] = [];
    await Promise.all(Array.from({ length: 101 }, () => limiter.acquire('/r').then(() => times.push(time.t.now))));
    // 600/min is one per 100 ms: 100 intervals take 10 s, not 13 s (paced from each late send).
    expect(times.at(-1)).toBeLessThanOrEqual(10_000 + 30);
    expect(minGap(times)).toBeGreaterThanOrEqual(50);
    expect(maxInWindow(times, 60_000)).toBeLessThanOrEqual(600);
  });

  it('works on the real clock with the default sleep', async () => {
    const limiter = new RateLimiter({ perMinute: 3_000, perSecondPerRoute: 100, headroom: 0 });
    const start = performance.now();
    const stamps: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, () => limiter.acquire('/r').then(() => stamps.push(performance.now()))),
    );
    // 3000/min is one per 20 ms: five sends take at least 80 ms.
    expect(performance.now() - start).toBeGreaterThanOrEqual(79);
    // Send i is granted no earlier than 20 ms x i after the start. A stamp is taken when its promise callback
    // runs, which a busy event loop (a garbage collection, other test files) can only delay: so each stamp is
    // at or after its slot (up to the timers' millisecond rounding), whatever the load, and bunched sends
    // would fail it. Exact pacing is the simulated-clock tests' to check.
    stamps.forEach((t, i) => expect(t - start).toBeGreaterThanOrEqual(20 * i - 2));
  });

  it('rejects nonsensical limits', () => {
    expect(() => new RateLimiter({ perMinute: 0, perSecondPerRoute: 40, headroom: 0.05 })).toThrow(RangeError);
    expect(() => new RateLimiter({ perMinute: 700, perSecondPerRoute: 40, headroom: 1 })).toThrow(RangeError);
  });
});
