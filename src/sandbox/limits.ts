// Rate limits enforced exactly (API reference §8), each as a sliding-window log of accepted requests:
// a fixed window would let twice the cap through at its boundary, a log never does.

/** Accepted-request timestamps within the last `windowMs`, oldest first. */
export class SlidingWindowLog {
  private times: number[] = [];
  private head = 0;

  constructor(
    readonly cap: number,
    readonly windowMs: number,
  ) {}

  private prune(t: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) <= t - this.windowMs) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** Milliseconds until a request at `t` would be accepted (0: now). */
  waitMs(t: number): number {
    this.prune(t);
    const size = this.times.length - this.head;
    if (size < this.cap) return 0;
    return (this.times[this.head + size - this.cap] as number) + this.windowMs - t;
  }

  record(t: number): void {
    this.times.push(t);
  }
}

export type LimitVerdict =
  { ok: true } | { ok: false; retryAfterSeconds: number; perMinute: boolean; perSecond: boolean };

export const MINUTE_MS = 60_000;
export const SECOND_MS = 1_000;

/** Both limits checked and recorded in one synchronous step: per key per rolling minute, per route per rolling second. */
export class RateLimits {
  private readonly perKey = new Map<string, SlidingWindowLog>();
  private readonly perRoute = new Map<string, SlidingWindowLog>();

  constructor(
    readonly perMinute: number,
    readonly perSecondPerRoute: number,
  ) {}

  check(key: string, route: string, t: number): LimitVerdict {
    let k = this.perKey.get(key);
    if (!k) this.perKey.set(key, (k = new SlidingWindowLog(this.perMinute, MINUTE_MS)));
    let r = this.perRoute.get(route);
    if (!r) this.perRoute.set(route, (r = new SlidingWindowLog(this.perSecondPerRoute, SECOND_MS)));
    const waitKey = k.waitMs(t);
    const waitRoute = r.waitMs(t);
    if (waitKey > 0 || waitRoute > 0) {
      const wait = Math.max(waitKey, waitRoute);
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)),
        perMinute: waitKey > 0,
        perSecond: waitRoute > 0,
      };
    }
    k.record(t);
    r.record(t);
    return { ok: true };
  }
}
