import { describe, expect, it } from 'vitest';
import { rawSql } from '../../src/store/rawSql.js';
import { at, hourlyRows, load, spec, useTempStore } from '../support/store.js';

const store = useTempStore();

// Parameters: $run_id, $source, $status, $from, $to. A scope of a run that stored nothing.
const NOTHING_STORED_SQL = `INSERT INTO coverage VALUES ($source, 'monthly', 'org-1', $from, $to, $status, 0, $run_id, $from, 'no data')`;

describe('the windows an export looks at', () => {
  it("are those a run replaced: a failed or not eligible scope's window replaced nothing and is not one", async () => {
    await load(
      store(),
      spec({ windowStart: at(0), windowEnd: at(24), runId: 'r1' }),
      hourlyRows({ programs: ['p1'], fromHour: 0, toHour: 24 }),
    );
    await store().runs.start({ runId: 'r1', command: 'collect', options: {} });
    for (const [source, status] of [
      ['v1_programs', 'not_eligible'],
      ['v2_frameworks', 'failed'],
    ])
      await rawSql(store()).run(NOTHING_STORED_SQL, { source, status, run_id: 'r1', from: at(-24 * 300), to: at(0) });
    const windows = await store().dataset.changedWindows('/data/dataset');
    expect(windows.map((w) => [w.stream, w.granularity, w.start.toISOString(), w.end.toISOString()])).toEqual([
      ['usage_program', 'hourly', at(0).toISOString(), at(24).toISOString()],
    ]);
  });
});
