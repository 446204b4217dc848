// The report is computed one chunk of programs at a time (store/report/stages.ts): the detail, framework_spend
// and FOCUS per chunk, their lines numbered on from the chunks before. The files must not depend on
// the chunk size: the medium world (380 programs) with chunks of 7 programs and with the default.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runReport, type ReportResult } from '../../src/report/run.js';
import { loadMonth, type Loaded } from '../support/month.js';
import { rawSql } from '../../src/store/rawSql.js';

const MONTH = '2025-10';
const BOOK = 'config/prices.toml';
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

let L: Loaded;
let whole: ReportResult;
let chunked: ReportResult;
beforeAll(async () => {
  L = await loadMonth({ month: MONTH, scenario: 'medium' });
  const base = {
    store: L.store,
    month: MONTH,
    formats: ['parquet', 'focus'] as const,
    priceBookPath: BOOK,
    now: new Date(L.now),
  };
  whole = await runReport({ ...base, formats: [...base.formats], outDir: join(L.dir, 'whole') });
  chunked = await runReport({
    ...base,
    formats: [...base.formats],
    outDir: join(L.dir, 'chunked'),
    programsPerChunk: 7,
  });
}, 300_000);
afterAll(async () => {
  await L?.store.close();
});

/**
 * Positions at which files a and b differ: a row of one that the other does not hold at the same position,
 * either way. Joined on the position (an EXCEPT ALL of the wide rows, both ways, took most of a minute).
 */
const positionalDiff = (a: string, b: string) => `
  WITH a AS (SELECT row_number() OVER () AS pos, t AS r FROM read_parquet('${a}') t),
       b AS (SELECT row_number() OVER () AS pos, t AS r FROM read_parquet('${b}') t)
  SELECT count(*) AS n FROM a FULL JOIN b USING (pos) WHERE a.r IS DISTINCT FROM b.r`;

test('chunks of 7 programs give the same report files, byte for byte, and the same FOCUS rows in the same order', async () => {
  const names = readdirSync(whole.dir)
    .filter((n) => n.endsWith('.parquet'))
    .sort();
  expect(names).toEqual(
    [
      'framework_spend.parquet',
      `focus-${MONTH}.parquet`,
      'program_spend.parquet',
      'snapshot_storage.parquet',
      'transfer.parquet',
    ].sort(),
  );
  expect(
    readdirSync(chunked.dir)
      .filter((n) => n.endsWith('.parquet'))
      .sort(),
  ).toEqual(names);
  for (const n of names.filter((x) => !x.startsWith('focus-')))
    expect({ n, sha: sha(join(chunked.dir, n)) }).toEqual({ n, sha: sha(join(whole.dir, n)) });
  // The FOCUS file is written from one Parquet part per chunk, so its row groups may be cut
  // differently: its rows and their order are the same.
  const focus = `focus-${MONTH}.parquet`;
  const [d] = await rawSql(L.store).query<{ n: bigint }>(
    positionalDiff(join(chunked.dir, focus), join(whole.dir, focus)),
  );
  expect(Number(d!.n)).toBe(0);
  expect(chunked.focus!.rows).toBe(whole.focus!.rows);
}, 180_000);

test('FOCUS and framework_spend lines are numbered program first, one after another, across the chunks', async () => {
  const [fw] = await rawSql(L.store).query<{ n: bigint; max_no: bigint; distinct_no: bigint; out_of_order: bigint }>(`
    WITH f AS (SELECT line_no, org_id, program_id, row_number() OVER () AS pos FROM read_parquet('${join(chunked.dir, 'framework_spend.parquet')}'))
    SELECT count(*) AS n, max(line_no) AS max_no, count(DISTINCT line_no) AS distinct_no,
           count(*) FILTER (WHERE line_no <> pos) AS out_of_order FROM f`);
  expect(Number(fw!.n)).toBeGreaterThan(380);
  expect(fw!.max_no).toBe(fw!.n);
  expect(fw!.distinct_no).toBe(fw!.n);
  expect(Number(fw!.out_of_order)).toBe(0);
  // The FOCUS file's programs come in one run each (program first), so chunks never interleave.
  const [fo] = await rawSql(L.store).query<{ runs: bigint; programs: bigint }>(`
    WITH f AS (SELECT "SubAccountId" AS p, lag("SubAccountId") OVER () AS prev FROM read_parquet('${join(chunked.dir, `focus-${MONTH}.parquet`)}'))
    SELECT count(*) FILTER (WHERE prev IS DISTINCT FROM p) AS runs, count(DISTINCT p) AS programs FROM f`);
  expect(Number(fo!.programs)).toBeGreaterThan(300);
  expect(fo!.runs).toBe(fo!.programs);
}, 180_000);
