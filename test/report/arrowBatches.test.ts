// The Arrow writer reads and writes one record batch at a time: a table larger than a batch, with
// gaps in its rowids, comes back whole, in order, with every int64 and decimal exact.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { writeArrowFile } from '../../src/report/arrow.js';
import { tempDir, useTempStore } from '../support/store.js';
import { rawSql } from '../../src/store/rawSql.js';

describe('writeArrowFile in batches', () => {
  const store = useTempStore();
  const { dir, cleanup } = tempDir('arrow-batches-');
  afterAll(cleanup);

  it('writes a table of several batches exactly, in row order', async () => {
    const s = store();
    // 150,001 rows span three batches; deleting every 7th row leaves gaps in the rowids.
    await rawSql(s).run(`CREATE TEMP TABLE rpt_transfer AS
      SELECT i::BIGINT AS n, (9007199254740993 + i)::BIGINT AS big, (i / 100)::DECIMAL(18,2) AS cost
      FROM range(150001) t(i)`);
    await rawSql(s).run('DELETE FROM rpt_transfer WHERE n % 7 = 3');
    const path = join(dir, 'big.arrow');
    const rows = await writeArrowFile(s, 'rpt_transfer', path);
    const expected = 150001 - Math.floor((150001 - 3 + 6) / 7);
    expect(rows).toBe(expected);

    const t = tableFromIPC(readFileSync(path));
    expect(t.numRows).toBe(expected);
    expect(t.batches.length).toBeGreaterThan(1);
    const n = t.getChild('n')!.toArray() as BigInt64Array;
    const big = t.getChild('big')!.toArray() as BigInt64Array;
    let prev = -1n;
    for (let i = 0; i < n.length; i++) {
      expect(n[i]! % 7n).not.toBe(3n);
      expect(n[i]! > prev).toBe(true);
      expect(big[i]).toBe(9007199254740993n + n[i]!);
      prev = n[i]!;
    }
    // Decimals as exact 128-bit integers of cents: cost = n / 100, so the cents are n.
    let row = 0;
    for (const batch of t.batches) {
      const words = batch.getChild('cost')!.data[0]!.values as Uint32Array;
      for (let i = 0; i < batch.numRows; i++, row++) {
        expect([words[i * 4], words[i * 4 + 1], words[i * 4 + 2], words[i * 4 + 3]]).toEqual([Number(n[row]), 0, 0, 0]);
      }
    }
    expect(row).toBe(expected);
  });

  it('writes an empty table with its schema', async () => {
    const s = store();
    await rawSql(s).run('CREATE TEMP TABLE rpt_daily (n BIGINT, label VARCHAR)');
    const path = join(dir, 'empty.arrow');
    expect(await writeArrowFile(s, 'rpt_daily', path)).toBe(0);
    const t = tableFromIPC(readFileSync(path));
    expect(t.numRows).toBe(0);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['n', 'label']);
  });

  it("refuses a table that is not one of the report's own (rpt_…, the staged partition)", async () => {
    // @ts-expect-error the ReportTable type refuses it too; the check at run time is for names built at run time.
    await expect(writeArrowFile(store(), 'programs', join(dir, 'programs.arrow'))).rejects.toThrow(
      '"programs" is not a report table of the store',
    );
  });
});
