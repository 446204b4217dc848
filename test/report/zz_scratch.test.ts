import { join } from 'node:path';
import { test } from 'vitest';
import { runReport } from '../../src/report/run.js';
import { loadMonth } from './fixture.js';
test('scratch', async () => {
  const L = await loadMonth({ month: '2025-10' });
  const r = await runReport({ store: L.store, month: '2025-10', outDir: join(L.dir, 'reports'), formats: ['parquet', 'xlsx', 'focus', 'html'], priceBookPath: 'config/prices.toml', now: new Date(L.now) });
  console.log(r.dir, r.total, r.focus?.billedTotal, r.focus?.rows, r.forecast?.totals, r.files.map(f => f.path.split('/').at(-1)));
  const f = r.files.find(x => x.path.includes('focus-'))!.path;
  console.log(await L.store.query(`SELECT "x_LineType", "PricingUnit", "x_Unpriced", count(*) n, sum("BilledCost") b, sum("ListCost") l FROM read_parquet('${f}') GROUP BY ALL ORDER BY ALL`));
  console.log(await L.store.query(`SELECT * FROM read_parquet('${f}') LIMIT 2`));
  console.log(await L.store.query(`SELECT "ChargeDescription" FROM read_parquet('${f}') USING SAMPLE 5 ROWS`));
  await L.store.close();
});
