// The alerts' configuration: documented defaults, the webhook's https rule, budgets that make sense.
import { describe, expect, test } from 'vitest';
import { alertSettings } from '../../src/alerts/evaluate.js';
import { configSchema } from '../../src/config/schema.js';

describe('[alerts] and [[budgets]]', () => {
  test('the defaults are the documented rule', () => {
    const s = alertSettings(configSchema.parse({}));
    expect(s.anomaly).toEqual({
      minExcessCents: 1000n,
      minRatio: 1.5,
      minScore: 4,
      baselineDays: 28,
      minBaselineDays: 14,
    });
    expect(s.orgThresholdsPct).toEqual([50, 80, 100]);
    expect(s.orgBudgetFromLimit).toBe(true);
  });

  test('webhook: https anywhere, plain http only to loopback', () => {
    const ok = (url: string) => configSchema.safeParse({ alerts: { webhook_url: url } }).success;
    expect(ok('https://hooks.example.com/x')).toBe(true);
    expect(ok('http://127.0.0.1:8080/hook')).toBe(true);
    expect(ok('http://localhost/hook')).toBe(true);
    expect(ok('http://[::1]:9/h')).toBe(true);
    expect(ok('http://hooks.example.com/x')).toBe(false);
    expect(ok('http://127.0.0.1.example.com/x')).toBe(false);
    expect(ok('ftp://127.0.0.1/x')).toBe(false);
  });

  test('budgets name an organization or programs, and programs need an amount', () => {
    const s = alertSettings(
      configSchema.parse({
        budgets: [
          { name: 'a', programs: ['p1'], amount_usd: '100' },
          { name: 'set', programs: ['p1', 'p2'], amount_usd: '250.50', thresholds_pct: [90] },
          { name: 'org', organization: 'org-1' },
        ],
      }),
    );
    expect(s.budgets.map((b) => [b.scopeKind, b.scopeId, b.amountCents])).toEqual([
      ['program', 'p1', 10_000n],
      ['programs', 'set', 25_050n],
      ['organization', 'org-1', null],
    ]);
    expect(configSchema.safeParse({ budgets: [{ name: 'x', programs: ['p1'] }] }).success).toBe(false);
    expect(
      configSchema.safeParse({ budgets: [{ name: 'x', organization: 'o', programs: ['p1'], amount_usd: '1' }] })
        .success,
    ).toBe(false);
  });
});
