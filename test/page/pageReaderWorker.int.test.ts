// Pages read on the page reader's worker thread (page/pageReader.ts, compiled: the worker runs dist/'s
// readPageWorker.js) against readPage() on this thread: the same rows, int64 beyond 2^53 exact, the same
// refusal naming the same offence, in the order the pages were given, and the page's bytes moved, not
// copied. An integration test because it runs the built code (test/support/build.ts builds it first).
import { afterAll, describe, expect, it } from 'vitest';
import { V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import type { Source } from '../../src/domain/granularity.js';
import type * as ReaderModule from '../../src/page/pageReader.js';
import { PageShapeError, readPage } from '../../src/page/readPage.js';
import { pageContents as contents } from '../support/pageContents.js';

const BUILT = new URL('../../dist/src/page/pageReader.js', import.meta.url).href;
const { PageReader } = (await import(BUILT)) as typeof ReaderModule;
const reader = new PageReader();
afterAll(() => reader.close());

const hour = (h: number) => new Date(Date.UTC(2026, 10, 19) + h * 3_600_000).toISOString().replace('.000Z', 'Z');

/** A frameworks page of `n` frameworks with 48 hourly buckets each; `value` gives each cell. */
function frameworksPage(n: number, value: (f: number, h: number, m: number) => string): string {
  const items = [];
  for (let f = 0; f < n; f++) {
    const buckets = [];
    for (let h = 0; h < 48; h++) {
      const metrics = V2_FRAMEWORK_METRICS.map((m, i) => `{"metric_name":"${m}","value":${value(f, h, i)}}`);
      buckets.push(
        `{"timeframe_start":"${hour(h)}","timeframe_end":"${hour(h + 1)}","metrics":[${metrics.join(',')}]}`,
      );
    }
    items.push(
      `{"program_id":"prog-${f % 7}","framework_id":"fw-${f}","periods":[{"period_id":"pd-${f % 3}","period_plan":"scale",` +
        `"period_start":"2026-10-01T00:00:00Z","period_end":null,"consumption":[${buckets.join(',')}]}]}`,
    );
  }
  return `{"frameworks":[${items.join(',')}],"pagination":{"cursor":"fw-${n - 1}"}}`;
}

const ordinary = (f: number, h: number, m: number) => String((f * 7919 + h * 104_729 + m * 13) % 5_000_000_000);

/** Reads `text` both ways: the worker's rows and this thread's, or both refusals. */
async function bothWays(source: Source, text: string | Buffer) {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let here: ReturnType<typeof contents> | { offence: unknown };
  try {
    here = contents(readPage(source, bytes));
  } catch (err) {
    if (!(err instanceof PageShapeError)) throw err;
    here = { offence: err.offence };
  }
  let there: ReturnType<typeof contents> | { offence: unknown };
  try {
    // A copy: the worker is handed the buffer itself, which leaves this thread.
    there = contents(await reader.read(source, Buffer.from(bytes)));
  } catch (err) {
    expect(err).toHaveProperty('offence');
    there = { offence: (err as PageShapeError).offence };
  }
  return { here, there };
}

describe('the page reader on its worker thread', () => {
  it('runs off this thread in the built code', () => {
    expect(reader.offThread).toBe(true);
  });

  it('gives the rows readPage gives: a large frameworks page, a programs page, int64 beyond 2^53', async () => {
    const large = frameworksPage(400, ordinary);
    const big = frameworksPage(3, (f, h, m) =>
      f === 1 && h === 5 && m === 2 ? '9223372036854775807' : ordinary(f, h, m),
    );
    const programs = JSON.stringify({
      programs: [
        {
          program_id: 'p-1',
          periods: [
            {
              period_id: 'pd-1',
              period_plan: 'launch',
              period_start: '2026-10-01T00:00:00Z',
              consumption: [
                {
                  timeframe_start: hour(0),
                  timeframe_end: hour(1),
                  metrics: V2_PROGRAM_METRICS.map((metric_name, i) => ({ metric_name, value: i * 11 })),
                },
              ],
            },
          ],
        },
      ],
    });
    for (const [source, text] of [
      ['v2_frameworks', large],
      ['v2_frameworks', big],
      ['v2_programs', programs],
    ] as const) {
      const { here, there } = await bothWays(source, text);
      expect(there).toEqual(here);
      expect('rows' in there && there.rows.length).toBeGreaterThan(0);
    }
    const { there } = await bothWays('v2_frameworks', big);
    const cells = 'rows' in there ? there.rows.flatMap((r) => r.metrics) : [];
    expect(cells).toContain(9223372036854775807n);
    expect(large.length).toBeGreaterThan(1_000_000);
  });

  it('refuses what readPage refuses, naming the same offence: a wrong type, bytes that are not UTF-8, a truncated page', async () => {
    const page = frameworksPage(2, ordinary);
    const broken: [string, string | Buffer][] = [
      ['a string for a value', page.replace(/"value":\d+/, '"value":"12"')],
      ['a negative value', page.replace(/"value":\d+/, '"value":-4')],
      [
        'not UTF-8',
        Buffer.concat([Buffer.from(page.slice(0, 40)), Buffer.from([0xff, 0xfe]), Buffer.from(page.slice(42))]),
      ],
      ['truncated', page.slice(0, page.length - 20)],
    ];
    for (const [why, text] of broken) {
      const { here, there } = await bothWays('v2_frameworks', text);
      expect(here, why).toHaveProperty('offence');
      expect(there, why).toEqual(here);
    }
  });

  it('answers many pages given at once, each with its own rows, and moves the bytes it is given', async () => {
    const texts = Array.from({ length: 12 }, (_, i) =>
      frameworksPage(5 + i, (f, h, m) => String(i * 1000 + f + h + m)),
    );
    const buffers = texts.map((t) => Buffer.from(t, 'utf8'));
    const got = await Promise.all(buffers.map((b) => reader.read('v2_frameworks', b)));
    got.forEach((rows, i) => expect(contents(rows)).toEqual(contents(readPage('v2_frameworks', texts[i]!))));
    // A page's own buffer went to the worker: nothing of it is left here.
    expect(buffers.every((b) => b.buffer.byteLength === 0)).toBe(true);
  });

  it('starts a new worker after close, and reads as before', async () => {
    const other = new PageReader();
    const text = frameworksPage(4, ordinary);
    const first = contents(await other.read('v2_frameworks', Buffer.from(text)));
    await other.close();
    const again = contents(await other.read('v2_frameworks', Buffer.from(text)));
    expect(again).toEqual(first);
    await other.close();
  });
});
