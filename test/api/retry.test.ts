import { describe, expect, it } from 'vitest';
import { backoffDelay, parseRetryAfter } from '../../src/api/retry.js';

describe('backoffDelay', () => {
  it('is full jitter over an exponentially growing, capped ceiling', () => {
    expect(backoffDelay(0, { random: () => 0.999, capMs: 60_000 })).toBe(499);
    expect(backoffDelay(3, { random: () => 0.5, capMs: 60_000 })).toBe(2_000);
    expect(backoffDelay(3, { random: () => 0, capMs: 60_000 })).toBe(0);
    expect(backoffDelay(20, { random: () => 0.999, capMs: 60_000 })).toBe(59_940);
    expect(backoffDelay(2000, { random: () => 0.5, capMs: 10_000 })).toBe(5_000);
  });

  it('takes Retry-After as a floor, but never waits beyond the cap', () => {
    expect(backoffDelay(0, { random: () => 0.5, capMs: 60_000, retryAfterMs: 3_000 })).toBe(3_000);
    expect(backoffDelay(10, { random: () => 0.9, capMs: 60_000, retryAfterMs: 3_000 })).toBeGreaterThan(3_000);
    expect(backoffDelay(0, { random: () => 0.5, capMs: 60_000, retryAfterMs: 120_000 })).toBe(60_000);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('2', now)).toBe(2_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
    expect(parseRetryAfter(new Date(now + 7_000).toUTCString(), now)).toBe(7_000);
    expect(parseRetryAfter(new Date(now - 7_000).toUTCString(), now)).toBe(0);
    expect(parseRetryAfter(['4', '9'], now)).toBe(4_000);
  });
  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-3', now)).toBeUndefined();
  });
});
