// The rate a usage bucket is priced at comes from SQL (view spend_program_buckets of migration 004,
// read by every spend macro): the shipped price book's published rates, each in force from its
// effective_from (inclusive) to its effective_to (exclusive), and no rate where the book has none.
import { describe, expect, test } from 'vitest';
import { loadPriceBook } from '../../src/billing/pricebook.js';
import { refreshPrices } from '../../src/report/prices.js';
import type { UsageRowIn } from '../support/rowLoader.js';
import { load, spec, useTempStore } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

const CASES = [
  { plan: 'launch', metric: 'compute_unit_seconds', at: '2025-09-30T23:00:00Z', rate: '0.140000' },
  { plan: 'launch', metric: 'compute_unit_seconds', at: '2025-10-01T00:00:00Z', rate: '0.106000' },
  { plan: 'scale', metric: 'compute_unit_seconds', at: '2025-09-01T00:00:00Z', rate: '0.260000' },
  { plan: 'scale', metric: 'compute_unit_seconds', at: '2026-01-01T00:00:00Z', rate: '0.222000' },
  { plan: 'launch', metric: 'compute_unit_seconds', at: '2025-08-13T00:00:00Z', rate: null },
  { plan: 'scale', metric: 'root_branch_bytes_month', at: '2025-10-05T00:00:00Z', rate: '0.350000' },
  { plan: 'scale', metric: 'private_network_transfer_bytes', at: '2025-10-05T00:00:00Z', rate: '0.010000' },
  { plan: 'launch', metric: 'private_network_transfer_bytes', at: '2025-10-05T00:00:00Z', rate: null },
] as const;

describe('rates in force, as the spend SQL applies them', () => {
  const store = useTempStore();

  test('config/prices.toml: the published rates at their boundaries, and none where the book has none', async () => {
    expect(await refreshPrices(store(), loadPriceBook('config/prices.toml'), new Date('2026-02-01T00:00:00Z'))).toBe(
      true,
    );
    const rows: UsageRowIn[] = CASES.map((c, i) => {
      const start = new Date(c.at);
      return {
        org_id: 'org-1',
        program_id: `program-${i}`,
        period_id: `period-${i}`,
        period_plan: c.plan,
        period_start: new Date('2025-08-01T00:00:00Z'),
        period_end: null,
        timeframe_start: start,
        timeframe_end: new Date(start.getTime() + 3_600_000),
        metric: c.metric,
        value: 1n,
      };
    });
    await load(
      store(),
      spec({ windowStart: new Date('2025-08-01T00:00:00Z'), windowEnd: new Date('2026-02-01T00:00:00Z') }),
      rows,
    );
    const priced = await rawSql(store()).query<{ program_id: string; rate: string | null; rate_micro: bigint | null }>(
      'SELECT program_id, rate, rate_micro FROM spend_program_buckets ORDER BY program_id',
    );
    expect(priced.map((r) => [r.program_id, r.rate])).toEqual(CASES.map((c, i) => [`program-${i}`, c.rate]));
    expect(priced[5]!.rate_micro).toBe(350_000n);
  });
});
