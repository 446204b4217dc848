// Client-side rate limiter holding both limits of the API reference (§8) at once: requests per rolling minute for the key
// and requests per rolling second per route.
//
// Why this shape (ARCHITECTURE.md, "API facts": limits): a fixed-window counter lets twice the cap through
// at a window boundary, and two nested queues do not hold both limits together. So every grant checks both
// sliding windows (logs of send times) in one synchronous step, and requests are paced evenly at the
// target rate rather than sent in bursts. A few percent of headroom absorbs clock and latency jitter
// between us and the server. After a 429 the rate drops and then climbs back gradually.

import { CONFIG_DEFAULTS } from '../config/schema.js';

/** Length of the per-key window (§8: requests per minute). */
export const MINUTE_WINDOW_MS = 60_000;
/** Length of the per-route window (§8: burst per second per route). */
export const SECOND_WINDOW_MS = 1_000;
/** Factor applied to the rate on a 429. */
export const THROTTLE_FACTOR = 0.7;
/** 429s within this long of a rate cut were caused by requests already in flight: they do not cut again. */
export const THROTTLE_COOLDOWN_MS = 2_000;
/** The longest pause a 429 may impose, whatever its Retry-After says (config api.max_retry_after_seconds). */
export const DEFAULT_MAX_PAUSE_MS = CONFIG_DEFAULTS.api.max_retry_after_seconds * 1000;
/** Pause after a 429 that carried no Retry-After. */
export const DEFAULT_THROTTLE_PAUSE_MS = 1_000;
/** Recovery: each clean interval of this length restores a step of the configured rate. */
export const RECOVERY_INTERVAL_MS = 10_000;
export const RECOVERY_STEP = 0.05;
/** The rate is never cut below this fraction of the configured rate. */
export const MIN_RATE_FACTOR = 0.01;

export interface LimiterOptions {
  perMinute: number;
  perSecondPerRoute: number;
  /** Fraction kept unused under each cap (the configuration's api.rate_limit.headroom; one default, there). */
  headroom: number;
  /** Milliseconds, monotonic; default performance.now. */
  clock?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Cap on the pause after a 429; default 60 s. */
  maxPauseMs?: number;
}

export interface LimiterStats {
  /** Requests granted. */
  acquired: number;
  /** Time the limiter held requests back (wall time of its waits, not summed per waiter). */
  waitedMs: number;
  /** 429s reported through onThrottled. */
  throttles: number;
  /** The pace now targeted, requests per minute (configured rate less headroom, less any throttle cut). */
  currentPerMinute: number;
}

/** A log of send times in ascending order; old entries are dropped from the front. */
class TimeLog {
  private times: number[] = [];
  private head = 0;
  /** Kept apart from the log: even pacing at a very low rate can space sends further apart than the window. */
  private lastTime: number | undefined;

  /** Drops entries that no longer count at `now` (an entry at t counts while now < t + window). */
  prune(now: number, windowMs: number): void {
    while (this.head < this.times.length && (this.times[this.head] as number) + windowMs <= now) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }
  get size(): number {
    return this.times.length - this.head;
  }
  /** The i-th entry still in the log, oldest first. */
  at(i: number): number {
    return this.times[this.head + i] as number;
  }
  last(): number | undefined {
    return this.lastTime;
  }
  push(t: number): void {
    this.times.push(t);
    this.lastTime = t;
  }
}

interface Waiter {
  route: string;
  priority: number;
  resolve: () => void;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RateLimiter {
  private readonly perMinute: number;
  private readonly perSecond: number;
  private readonly headroom: number;
  private readonly clock: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly maxPauseMs: number;

  private readonly minuteLog = new TimeLog();
  private readonly routeLogs = new Map<string, TimeLog>();
  private readonly queue: Waiter[] = [];
  private queueHead = 0;
  private pumping = false;
  /** The last grant went to a waiter ahead of a lower-priority one: the next goes to the lower one. */
  private passedLower = false;
  /** When the even pacing had the last send due (see tryGrant). */
  private dueAt: number | undefined;

  private factor = 1;
  /** Start of the current clean interval (since the last cut or the last recovery step). */
  private factorSince = 0;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  private pausedUntil = Number.NEGATIVE_INFINITY;

  private readonly counters = { acquired: 0, waitedMs: 0, throttles: 0 };

  constructor(opts: LimiterOptions) {
    if (!(opts.perMinute > 0) || !(opts.perSecondPerRoute > 0)) {
      throw new RangeError('rate limits must be positive numbers');
    }
    const headroom = opts.headroom;
    if (!(headroom >= 0 && headroom < 1)) throw new RangeError('headroom must be in [0, 1)');
    this.perMinute = opts.perMinute;
    this.perSecond = opts.perSecondPerRoute;
    this.headroom = headroom;
    this.clock = opts.clock ?? (() => performance.now());
    this.sleep = opts.sleep ?? defaultSleep;
    this.maxPauseMs = opts.maxPauseMs ?? DEFAULT_MAX_PAUSE_MS;
  }

  get stats(): LimiterStats {
    this.recover(this.clock());
    return { ...this.counters, currentPerMinute: this.ratePerMinute() };
  }

  /**
   * Resolves when a request on `route` may be sent now, and records it as sent. FIFO across all routes
   * among waiters of one priority; a higher priority goes ahead of lower ones already waiting (a page
   * that others wait on, such as the next page of a cursor chain), but never twice in a row: while both
   * wait, grants alternate. Strict priority starved the lower one (the frameworks pages waited for every
   * programs page, so the collector's CPU sat idle while the rate went to the chains, then the rate sat
   * idle while the CPU caught up; BENCHMARKS.md, "The limiter's pacing (2026-11-23)").
   */
  acquire(route: string, priority = 0): Promise<void> {
    return new Promise<void>((resolve) => {
      const waiter = { route, priority, resolve };
      let at = this.queue.length;
      while (at > this.queueHead && (this.queue[at - 1] as Waiter).priority < priority) at--;
      this.queue.splice(at, 0, waiter);
      if (!this.pumping) void this.pump();
    });
  }

  /** A 429 came back: pause until `retryAfterMs` from now (at most maxPauseMs) and lower the rate, which then recovers gradually. */
  onThrottled(retryAfterMs?: number): void {
    const now = this.clock();
    this.counters.throttles++;
    const pause = Math.min(
      retryAfterMs !== undefined && retryAfterMs >= 0 ? retryAfterMs : DEFAULT_THROTTLE_PAUSE_MS,
      this.maxPauseMs,
    );
    this.pausedUntil = Math.max(this.pausedUntil, now + pause);
    this.recover(now);
    if (now - this.lastCutAt >= THROTTLE_COOLDOWN_MS) {
      this.factor = Math.max(MIN_RATE_FACTOR, this.factor * THROTTLE_FACTOR);
      this.lastCutAt = now;
    }
    // Whether or not it cut, a 429 means the interval was not clean.
    this.factorSince = now;
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      // When the pump slept until a send was due: the time it meant to wake (it may wake late).
      let wokeFor: number | undefined;
      while (this.queueHead < this.queue.length) {
        const at = this.nextWaiter();
        const waiter = this.queue[at] as Waiter;
        const now = this.clock();
        const wait = this.tryGrant(waiter.route, now, wokeFor);
        if (wait > 0) {
          wokeFor = now + wait;
          await this.sleep(wait);
          this.counters.waitedMs += Math.max(0, this.clock() - now);
          continue;
        }
        wokeFor = undefined;
        if (at === this.queueHead) this.queueHead++;
        else this.queue.splice(at, 1);
        if (this.queueHead > 1024 && this.queueHead * 2 > this.queue.length) {
          this.queue.splice(0, this.queueHead);
          this.queueHead = 0;
        }
        // The queue is in descending priority: a lower one still waits if the last waiter is lower.
        this.passedLower =
          this.queueHead < this.queue.length &&
          (this.queue[this.queue.length - 1] as Waiter).priority < waiter.priority;
        waiter.resolve();
      }
    } finally {
      this.pumping = false;
    }
  }

  /** The head of the queue, or, when the last grant passed a lower-priority waiter, the first such waiter. */
  private nextWaiter(): number {
    const head = this.queue[this.queueHead] as Waiter;
    if (this.passedLower) {
      for (let i = this.queueHead + 1; i < this.queue.length; i++)
        if ((this.queue[i] as Waiter).priority < head.priority) return i;
    }
    return this.queueHead;
  }

  /**
   * The one synchronous step: either records a send on `route` at `now` and returns 0, or returns how long
   * to wait before both windows, the even pacing and any pause allow it. `due`: when the send was due, if
   * the pump slept until then.
   */
  private tryGrant(route: string, now: number, due?: number): number {
    this.recover(now);
    const perMinute = this.ratePerMinute();
    const perSecond = this.perSecond * (1 - this.headroom) * this.factor;
    const minuteCap = Math.max(1, Math.floor(perMinute));
    const secondCap = Math.max(1, Math.floor(perSecond));

    this.minuteLog.prune(now, MINUTE_WINDOW_MS);
    let routeLog = this.routeLogs.get(route);
    if (routeLog === undefined) {
      routeLog = new TimeLog();
      this.routeLogs.set(route, routeLog);
    }
    routeLog.prune(now, SECOND_WINDOW_MS);

    let earliest = this.pausedUntil;
    // Even pacing counts from when the last send was due, not from when it went: a send that a busy event
    // loop woke late does not push every later one back (BENCHMARKS.md, "The limiter's pacing (2026-11-23)").
    // At most half an interval is made up, so sends stay evenly spaced, never in a burst; a send after an
    // idle spell or a pause counts from when it went.
    const interval = 60_000 / perMinute;
    if (this.dueAt !== undefined) earliest = Math.max(earliest, this.dueAt + interval);
    const lastRoute = routeLog.last();
    if (lastRoute !== undefined) earliest = Math.max(earliest, lastRoute + 1_000 / perSecond);
    // Full windows: wait until enough of the oldest sends have left them to make room for one more.
    if (this.minuteLog.size >= minuteCap) {
      earliest = Math.max(earliest, this.minuteLog.at(this.minuteLog.size - minuteCap) + MINUTE_WINDOW_MS);
    }
    if (routeLog.size >= secondCap) {
      earliest = Math.max(earliest, routeLog.at(routeLog.size - secondCap) + SECOND_WINDOW_MS);
    }

    if (earliest > now) return earliest - now;
    this.dueAt = due === undefined ? now : Math.max(Math.min(due, now), now - interval / 2);
    this.minuteLog.push(now);
    routeLog.push(now);
    this.counters.acquired++;
    this.forgetIdleRoutes(now, 1_000 / perSecond);
    return 0;
  }

  private ratePerMinute(): number {
    return this.perMinute * (1 - this.headroom) * this.factor;
  }

  /** Restores RECOVERY_STEP of the configured rate per clean RECOVERY_INTERVAL_MS, up to the configured rate. */
  private recover(now: number): void {
    if (this.factor >= 1) return;
    const steps = Math.floor((now - this.factorSince) / RECOVERY_INTERVAL_MS);
    if (steps <= 0) return;
    this.factor = Math.min(1, this.factor + steps * RECOVERY_STEP);
    this.factorSince += steps * RECOVERY_INTERVAL_MS;
  }

  /** Keeps the route map from growing with every route ever seen (routes are templates, but be safe). */
  private forgetIdleRoutes(now: number, routeSpacingMs: number): void {
    if (this.routeLogs.size <= 64) return;
    for (const [route, log] of this.routeLogs) {
      log.prune(now, SECOND_WINDOW_MS);
      if (log.size === 0 && now - (log.last() ?? now) >= routeSpacingMs) this.routeLogs.delete(route);
    }
  }
}
