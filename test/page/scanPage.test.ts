// The fast reading of a consumption page (page/scanPage.ts) against the general way (readPage.ts
// parsePage: JSON.parse or lossless-json and the strict walk): a page the scan reads gives exactly the
// rows the general way gives; a page it cannot read exactly is left to the general way.
import { describe, expect, it } from 'vitest';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import type { Source as PageSource } from '../../src/domain/granularity.js';
import type { PageRows } from '../../src/page/pageRows.js';
import { scanPage } from '../../src/page/scanPage.js';
import { PageShapeError, parsePage, readPage } from '../../src/page/readPage.js';
import { pageContents as contents } from '../support/pageContents.js';

function scanned(source: PageSource, text: string): PageRows | null {
  return scanPage(source, Buffer.from(text, 'utf8'));
}

/** The scan reads `text`, and reads it exactly as the general way does. */
function expectSameRows(source: PageSource, text: string): ReturnType<typeof contents> {
  const fast = scanned(source, text);
  expect(fast, text.slice(0, 200)).not.toBeNull();
  const general = contents(parsePage(source, text));
  expect(contents(fast!)).toEqual(general);
  return general;
}

const bucket = (h: number, metrics: [string, number][]) => ({
  timeframe_start: `2026-11-19T${String(h).padStart(2, '0')}:00:00Z`,
  timeframe_end: h === 23 ? '2026-11-20T00:00:00Z' : `2026-11-19T${String(h + 1).padStart(2, '0')}:00:00Z`,
  metrics: metrics.map(([metric_name, value]) => ({ metric_name, value })),
});

function frameworksPage(): string {
  const frameworks = [];
  for (let f = 0; f < 6; f++) {
    frameworks.push({
      program_id: `prog-${Math.floor(f / 3)}`,
      framework_id: `br-${f}`,
      periods: [
        {
          period_id: `pd-${f}`,
          period_plan: f % 2 ? 'scale' : 'launch',
          period_start: '2026-10-01T00:00:00Z',
          ...(f === 1 ? { period_end: '2026-11-19T05:00:00Z' } : { period_end: null }),
          consumption: [0, 1, 2, 23].map((h) =>
            bucket(
              h,
              // Rotated, some explicit zeros, one bucket with nothing reported (no row).
              f === 2 && h === 1
                ? [['compute_unit_seconds', 0]]
                : V2_FRAMEWORK_METRICS.map(
                    (m, i) =>
                      [m, (f * 1000 + h * 10 + i) % 7 === 0 ? 0 : 999_999_999_999_999 - f * h - i] as [string, number],
                  ).reverse(),
            ),
          ),
        },
      ],
    });
  }
  return JSON.stringify({ frameworks, pagination: { cursor: 'br-5' } });
}

describe('scanPage reads what the general way reads, row for row', () => {
  it('a frameworks page: every metric, zeros left out, an empty bucket, closed and open periods, the cursor', () => {
    const got = expectSameRows('v2_frameworks', frameworksPage());
    expect(got.rows.length).toBe(23);
    expect(got.cursor).toBe('br-5');
    expect(got.rows[0]!.start).toBe(Date.parse('2026-11-19T00:00:00Z') * 1000);
  });

  it('keys in any order, whitespace, unknown members of every JSON type, an escaped string among them', () => {
    const text = `{ "pagination" : { "next_hint": [1, -2.5e+3, true, false, null, {"a": "x\\"y\\u00e9"}], "cursor" : null },
      "extra": "d\u00e9j\u00e0",
      "programs" : [ { "periods": [ { "consumption": [ { "metrics": [ { "value": 7, "metric_name": "snapshot_storage_bytes_month", "unit": "byte-months" } ],
          "timeframe_end": "2026-11-02T00:00:00Z", "note": {}, "timeframe_start": "2026-11-01T00:00:00Z" } ],
        "period_start": "2026-10-01T00:00:00Z", "period_plan": "scale", "period_id": "pd-1" } ], "name": "x", "program_id": "p-1" } ] }`;
    const got = expectSameRows('v2_programs', text);
    expect(got.rows).toEqual([
      {
        item: 0,
        period: 0,
        start: Date.parse('2026-11-01T00:00:00Z') * 1000,
        end: Date.parse('2026-11-02T00:00:00Z') * 1000,
        metrics: [null, null, null, null, null, null, null, 7, null, null, null, null, null, null, null],
      },
    ]);
  });

  it('a v1 page: the metric fields, null and zero as not reported', () => {
    const fields = Object.fromEntries(V1_METRICS.map((m, i) => [m, i === 1 ? null : i === 2 ? 0 : 1000 + i]));
    const text = JSON.stringify({
      programs: [
        {
          program_id: 'p',
          periods: [
            {
              period_id: 'x',
              period_plan: 'legacy',
              period_start: '2026-01-01T00:00:00Z',
              consumption: [
                { timeframe_start: '2026-11-01T00:00:00Z', timeframe_end: '2026-11-02T00:00:00Z', ...fields },
              ],
            },
          ],
        },
      ],
    });
    const got = expectSameRows('v1_programs', text);
    expect(got.values).toBe(V1_METRICS.length - 2);
  });

  it('a v2 programs page may report the v1 metrics too; a frameworks item without rows is still an item', () => {
    expectSameRows(
      'v2_programs',
      JSON.stringify({
        programs: [
          {
            program_id: 'p',
            periods: [
              {
                period_id: 'x',
                period_plan: 'scale',
                period_start: '2026-01-01T00:00:00Z',
                consumption: [
                  bucket(3, [
                    [V1_METRICS[0], 5],
                    [V2_PROGRAM_METRICS[6], 6],
                  ]),
                ],
              },
            ],
          },
        ],
      }),
    );
    const got = expectSameRows(
      'v2_frameworks',
      JSON.stringify({
        frameworks: [
          { program_id: 'p', framework_id: 'f', periods: [] },
          {
            program_id: 'p',
            framework_id: 'g',
            periods: [{ period_id: 'x', period_plan: 'scale', period_start: '2026-01-01T00:00:00Z', consumption: [] }],
          },
        ],
      }),
    );
    expect(got).toMatchObject({ items: 2, programIds: ['p', 'p'], frameworkIds: ['f', 'g'], rows: [] });
  });

  it('an empty list, a null list, no list at all', () => {
    expect(expectSameRows('v2_programs', '{"programs":[]}').items).toBe(0);
    expect(expectSameRows('v2_programs', '{"programs":null,"pagination":{"cursor":"c"}}')).toMatchObject({
      items: null,
      cursor: 'c',
    });
    expect(expectSameRows('v2_programs', '{"error":"nope"}').items).toBeNull();
  });

  it('times: any real UTC second of 1970-2199 as Date.parse reads it', () => {
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const t = Date.UTC(1970, 0, 1) + Math.floor(next() * (Date.UTC(2200, 0, 1) - Date.UTC(1970, 0, 1)));
      const iso = new Date(t - (t % 1000)).toISOString().replace('.000Z', 'Z');
      const text = JSON.stringify({
        programs: [
          { program_id: 'p', periods: [{ period_id: 'x', period_plan: 'scale', period_start: iso, consumption: [] }] },
        ],
      });
      expect(scanned('v2_programs', text)!.periodStarts[0], iso).toBe(Date.parse(iso) * 1000);
    }
  });
});

describe('scanPage leaves to the general way what it cannot read exactly', () => {
  const base = JSON.parse(frameworksPage()) as { frameworks: Record<string, unknown>[] };
  const cases: [string, string][] = [
    ['an integer of 16 digits', frameworksPage().replace('999999999999999', '9007199254740993')],
    ['a fraction', frameworksPage().replace('999999999999999', '1.5')],
    ['a negative value', frameworksPage().replace('999999999999999', '-1')],
    ['an exponent', frameworksPage().replace('999999999999999', '1e3')],
    ['a leading zero', frameworksPage().replace('999999999999999', '0999')],
    ['an escaped id', frameworksPage().replace('"br-0"', '"br\\u002d0"')],
    ['an escaped key', frameworksPage().replace('"program_id"', '"program\\u005fid"')],
    ['a non-ASCII id', frameworksPage().replace('"br-0"', '"br-\u00e9"')],
    ['a time with an offset', frameworksPage().replace('2026-11-19T00:00:00Z', '2026-11-19T01:00:00+01:00')],
    ['a time with a fraction', frameworksPage().replace('2026-11-19T00:00:00Z', '2026-11-19T00:00:00.000Z')],
    ['a day that does not exist', frameworksPage().replace('2026-10-01T00:00:00Z', '2026-02-30T00:00:00Z')],
    ['a year before 1970', frameworksPage().replace('2026-10-01T00:00:00Z', '1969-12-31T23:00:00Z')],
    [
      'a key given twice',
      frameworksPage().replace('"framework_id":"br-0"', '"framework_id":"br-0","framework_id":"br-9"'),
    ],
    [
      'a metric given twice',
      frameworksPage().replace(
        '{"metric_name":"compute_unit_seconds"',
        '{"metric_name":"root_branch_bytes_month","value":5},{"metric_name":"compute_unit_seconds"',
      ),
    ],
    ['a metric not asked for', frameworksPage().replace('"compute_unit_seconds"', '"snapshot_storage_bytes_month"')],
    ['a value that is a string', frameworksPage().replace('999999999999999', '"5"')],
    ['an empty id', frameworksPage().replace('"br-0"', '""')],
    ['a missing framework_id', JSON.stringify({ frameworks: [{ ...base.frameworks[0], framework_id: undefined }] })],
    ['a trailing comma', frameworksPage().replace(']}]}', ']},]}')],
    ['text after the object', `${frameworksPage()} x`],
    ['a byte-order mark', `\ufeff${frameworksPage()}`],
    ['not an object', '[1]'],
    ['a bad literal', frameworksPage().replace('"period_end":null', '"period_end":nul')],
    ['a bad escape in a skipped string', frameworksPage().replace('"pagination":{', '"x":"\\q","pagination":{')],
  ];
  for (const [what, text] of cases) {
    it(what, () => {
      expect(scanned('v2_frameworks', text)).toBeNull();
      // readPage then reads it the general way: the same rows, or the same refusal.
      let general: unknown;
      try {
        general = contents(parsePage('v2_frameworks', text));
      } catch (err) {
        expect(err).toBeInstanceOf(PageShapeError);
        expect(() => readPage('v2_frameworks', Buffer.from(text, 'utf8'))).toThrow((err as Error).message);
        return;
      }
      expect(contents(readPage('v2_frameworks', Buffer.from(text, 'utf8')))).toEqual(general);
    });
  }
});
