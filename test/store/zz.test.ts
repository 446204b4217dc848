import { it } from 'vitest';
import { join } from 'node:path';
import { publishAnalystCopy } from '../../src/store/publish.js';
import { openStore } from '../../src/store/store.js';
import { at, hourlyRows, load, spec, tempDir } from '../support/store.js';
import { copyDifferences } from '../support/analyst.js';
it('prof', async () => {
  const t = tempDir();
  const store = await openStore({ path: join(t.dir, 'usage.duckdb') });
  let t0 = Date.now();
  await load(store, spec({ windowStart: at(0), windowEnd: at(24) }), hourlyRows({ programs: ['p1','p2'], fromHour: 0, toHour: 24 }));
  console.log('load', Date.now() - t0); t0 = Date.now();
  const copy = await publishAnalystCopy(store);
  console.log('publish', Date.now() - t0); t0 = Date.now();
  await copyDifferences(store, copy);
  console.log('diff', Date.now() - t0); t0 = Date.now();
  await store.close(); t.cleanup();
});
