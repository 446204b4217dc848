// report --format arrow: Arrow IPC files that pyarrow and polars read with the Parquet files' types
// and values (int64 exact, decimals for money, UTC timestamps).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { reportCommand } from '../../src/cli/report.js';
import { silentLogger } from '../../src/log.js';
import { demoCopy } from '../support/demo.js';
import { venvPython } from '../support/python.js';

const NOW = Date.parse('2026-11-21T10:37:00Z');
const REPORTS = ['program_spend', 'framework_spend', 'snapshot_storage', 'transfer'];

describe('report --format arrow', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-arrow-'));
  let read: Record<
    string,
    {
      rows: number;
      equal: boolean;
      polars_rows: number;
      polars_equal: boolean;
      polars_cost_sum: string | null;
      arrow_types: Record<string, string>;
      parquet_types: Record<string, string>;
      polars_types: Record<string, string>;
    }
  >;
  let total: string;

  beforeAll(async () => {
    const demo = await demoCopy(join(dir, 'demo'), NOW);
    const r = await reportCommand({
      db: demo.db,
      month: '2026-10',
      out: join(dir, 'reports'),
      format: 'parquet,arrow',
      prices: join(process.cwd(), 'config/prices.toml'),
      now: () => NOW,
      log: silentLogger,
    });
    total = r.total;
    expect(r.files.filter((f) => f.path.endsWith('.arrow')).length).toBe(4);
    read = JSON.parse(
      execFileSync(venvPython(), ['test/report/read_arrow.py', join(dir, 'reports', '2026-10'), ...REPORTS]).toString(),
    );
  }, 180_000);

  it.each(REPORTS)('%s.arrow equals %s.parquet in pyarrow, types and values', (name) => {
    const r = read[name]!;
    expect(r.rows).toBeGreaterThan(0);
    expect(r.arrow_types).toEqual(r.parquet_types);
    expect(r.equal).toBe(true);
  });

  it('keeps int64, decimal money and UTC timestamps, and polars reads the same frame', () => {
    const p = read.program_spend!;
    expect(p.arrow_types.line_no).toBe('int64');
    expect(p.arrow_types.cost).toBe('decimal128(18, 2)');
    expect(p.arrow_types.quantity_raw).toBe('decimal128(38, 0)');
    expect(p.arrow_types.line_from).toBe('timestamp[us, tz=UTC]');
    expect(p.arrow_types.billing_month).toBe('date32[day]');
    for (const name of REPORTS) {
      expect(read[name]!.polars_rows).toBe(read[name]!.rows);
      expect(read[name]!.polars_equal, name).toBe(true);
    }
    expect(p.polars_types.cost).toMatch(/^Decimal\(precision=18, scale=2\)$/);
    expect(p.polars_types.line_from).toMatch(/Datetime\(time_unit='us', time_zone='UTC'\)/);
    expect(p.polars_cost_sum).toBe(total);
  });
});
