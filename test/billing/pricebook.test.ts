import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { PriceBookError, loadPriceBook } from '../../src/billing/pricebook.js';

describe('config/prices.toml', () => {
  const book = loadPriceBook('config/prices.toml');

  test('has a revision and a source for every rate (the rates in force: test/report/rates.test.ts)', () => {
    expect(book.revision).toMatch(/\S/);
    expect(book.rates.length).toBeGreaterThan(20);
    for (const r of book.rates) expect(r.source.length).toBeGreaterThan(10);
    expect(book.rates.filter((r) => r.plan === 'enterprise')).toEqual([]);
    for (const r of book.rates.filter((r) => r.plan.startsWith('legacy_')))
      expect(r.source).toContain('assumed for the legacy plans; replace with your contract rates');
    const [a] = book.allowances;
    expect(a).toMatchObject({
      metric: 'public_network_transfer_bytes',
      scope: 'program_month',
      includedRaw: 500_000_000_000n,
    });
  });

  test('keeps the metric catalogue with divisors and gauge aggregation', () => {
    expect(book.metrics.get('compute_unit_seconds')).toMatchObject({
      divisor: 3600n,
      billingUnit: 'CU-hour',
      aggregation: 'sum',
    });
    expect(book.metrics.get('extra_branches_month')?.divisor).toBe(744n);
    expect(book.metrics.get('data_storage_bytes_hour')?.divisor).toBe(744_000_000_000n);
    expect(book.metrics.get('synthetic_storage_size_bytes')?.aggregation).toBe('max');
    expect(book.metrics.get('logical_size_bytes')?.aggregation).toBe('max');
    for (const m of book.metrics.values()) expect(m.source).toMatch(/\S/);
  });
});

test('an invalid book names every problem with its dotted path', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pricebook-'));
  const path = join(dir, 'bad.toml');
  writeFileSync(
    path,
    `
revision = "r1"
currency = "USD"
[metrics.compute_unit_seconds]
api_version = "v2"
raw_unit = "CU-seconds"
billing_unit = "CU-hour"
divisor = "36.5"
aggregation = "sum"
source = "x"
[metrics.gauge]
api_version = "v1"
raw_unit = "bytes"
billing_unit = "GB"
divisor = "1000000000"
aggregation = "max"
source = "x"
[[rates]]
plan = "launch"
metric = "compute_unit_seconds"
rate = 0.106
effective_from = "2025-10-01"
source = "s"
[[rates]]
plan = "launch"
metric = "compute_unit_seconds"
rate = "0.1"
effective_from = "2025-13-01"
source = ""
`,
  );
  let err: unknown;
  try {
    loadPriceBook(path);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(PriceBookError);
  const problems = (err as PriceBookError).problems.join('\n');
  expect(problems).toContain('metrics.compute_unit_seconds.divisor: expected a positive integer');
  expect(problems).toContain('rates[0].rate:');
  expect(problems).toContain('rates[1].effective_from: expected a date YYYY-MM-DD');
  expect(problems).toContain('rates[1].source: every rate needs a source');

  // Semantic problems, once the shapes are right.
  writeFileSync(
    path,
    `
revision = "r1"
currency = "USD"
[metrics.m]
api_version = "v1"
raw_unit = "bytes"
billing_unit = "GB"
divisor = "1000000000"
aggregation = "max"
source = "x"
[[rates]]
plan = "p"
metric = "m"
rate = "1"
effective_from = 2025-01-01
source = "s"
[[rates]]
plan = "p"
metric = "m"
rate = "2"
effective_from = "2025-06-01"
source = "s"
[[rates]]
plan = "p"
metric = "nope"
rate = "2"
effective_from = "2025-06-01"
effective_to = "2025-05-01"
source = "s"
[[allowances]]
metric = "m"
plans = ["p"]
included = "1"
scope = "program_month"
effective_from = "2025-01-01"
source = "s"
`,
  );
  try {
    loadPriceBook(path);
    expect.unreachable();
  } catch (e) {
    const p = (e as PriceBookError).problems.join('\n');
    expect(p).toContain('rates[1]: overlaps rates[0]');
    expect(p).toContain('rates[2].metric: "nope" is not in [metrics]');
    expect(p).toContain('rates[2].effective_to: must be after effective_from');
    expect(p).toContain('allowances[0].metric: "m" is a gauge');
  }
});
