// export stops on the run's signal: aborted, it writes no partition and rejects with the signal's reason.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exportDataset } from '../../src/export/dataset.js';
import { openStore } from '../../src/store/store.js';

describe('export and the run signal', () => {
  const dir = mkdtempSync(join(tmpdir(), 'usage-export-abort-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('an aborted signal stops before the first partition and records nothing', async () => {
    const store = await openStore({ path: join(dir, 'usage.duckdb') });
    try {
      const stop = new AbortController();
      const reason = new Error('stopped by SIGINT');
      stop.abort(reason);
      const out = join(dir, 'dataset');
      await expect(exportDataset({ store, dir: out, signal: stop.signal })).rejects.toBe(reason);
      expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
      expect(await store.dataset.exportedPartitions(out)).toEqual(new Map());
    } finally {
      await store.close();
    }
  });
});
