// The page reader against a reference decoding written here, independently of it: generated consumption
// pages (valid ones written every way JSON allows: keys in any order, whitespace, \u escapes, unknown
// members at every level, int64 edge values, times with fractions and offsets; and broken ones:
// truncated, bytes that are not UTF-8, impossible times, keys given twice, exotic numbers, text that is
// not Unicode) go through the real reader (readPage: the scan, else the general way) and through the
// general way alone (parsePage: JSON.parse or lossless-json). Each must give exactly the rows the
// reference gives, or refuse (PageShapeError) a page the reference refuses. The reference is a strict
// RFC 8259 parser over TextDecoder's fatal UTF-8 decoding, plus the documented rules (ARCHITECTURE.md,
// "What is refused"). Seeded: the seed and the case count are printed; FC_SEED and FC_RUNS set them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../../src/contract/api.js';
import type { Source as PageSource } from '../../src/domain/granularity.js';
import type { PageRows } from '../../src/page/pageRows.js';
import { scanPage } from '../../src/page/scanPage.js';
import { needsLossless } from '../../src/page/needsLossless.js';
import { PageShapeError, parsePage, readPage } from '../../src/page/readPage.js';
import { prng } from '../../src/sandbox/hash.js';

const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : Date.now() % 2 ** 31;
const RUNS = process.env.FC_RUNS ? Number(process.env.FC_RUNS) : 2000;
/** A property runs for seconds (about 10 on an idle machine for 2 x 2,000 pages): a bound for a loaded one, not a timing. */
const PROPERTY_TIMEOUT_MS = 300_000;

type Int64 = number | bigint;
const int64 = (v: bigint): Int64 => (v >= -(2n ** 53n - 1n) && v <= 2n ** 53n - 1n ? Number(v) : v);

// ---- The reference: a strict parser ----------------------------------------------------------------

class Refused extends Error {}
type RV =
  | { t: 'obj'; m: Map<string, RV> }
  | { t: 'arr'; a: RV[] }
  | { t: 'str'; s: string }
  | { t: 'num'; lit: string }
  | { t: 'lit'; v: boolean | null };

function refParse(bytes: Uint8Array): RV {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new Refused('not UTF-8');
  }
  let i = 0;
  const fail = (why: string): never => {
    throw new Refused(`${why} at ${i}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    i++; // the opening quote
    let out = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text[i]!;
      if (c === '"') break;
      if (c.charCodeAt(0) < 0x20) fail('control character');
      if (c !== '\\') {
        out += c;
        i++;
        continue;
      }
      const e = text[i + 1];
      const simple: Record<string, string> = {
        '"': '"',
        '\\': '\\',
        '/': '/',
        b: '\b',
        f: '\f',
        n: '\n',
        r: '\r',
        t: '\t',
      };
      if (e !== undefined && e in simple) {
        out += simple[e];
        i += 2;
      } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
        i += 6;
      } else {
        fail('bad escape');
      }
    }
    i++;
    return out;
  };
  const value = (depth: number): RV => {
    if (depth > 64) fail('too deep for the reference');
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const m = new Map<string, RV>();
      ws();
      if (text[i] === '}') {
        i++;
        return { t: 'obj', m };
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('key expected');
        const k = str();
        ws();
        if (text[i] !== ':') fail('colon expected');
        i++;
        if (m.has(k)) fail(`duplicate key ${k}`);
        m.set(k, value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return { t: 'obj', m };
        } else fail('comma or brace expected');
      }
    }
    if (c === '[') {
      i++;
      const a: RV[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { t: 'arr', a };
      }
      for (;;) {
        a.push(value(depth + 1));
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return { t: 'arr', a };
        } else fail('comma or bracket expected');
      }
    }
    if (c === '"') return { t: 'str', s: str() };
    const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    num.lastIndex = i;
    const n = num.exec(text);
    if (n) {
      i += n[0].length;
      return { t: 'num', lit: n[0] };
    }
    for (const [word, v] of [
      ['true', true],
      ['false', false],
      ['null', null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return { t: 'lit', v };
      }
    }
    return fail('value expected');
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail('trailing text');
  return v;
}

// ---- The reference: the documented rules -------------------------------------------------------------

const METRIC_COLUMNS: readonly string[] = [...V2_PROGRAM_METRICS, ...V1_METRICS];

/** Text that may be stored: no control characters, every surrogate paired. */
function storable(s: string): boolean {
  for (let k = 0; k < s.length; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x20) return false;
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(k + 1);
      if (!(d >= 0xdc00 && d <= 0xdfff)) return false;
      k++;
    } else if (c >= 0xdc00 && c <= 0xdfff) return false;
  }
  return true;
}

function refId(v: RV | undefined): string {
  if (v?.t !== 'str' || v.s.length === 0 || !storable(v.s)) throw new Refused('id');
  return v.s;
}

/** A real instant, checked against Date's own calendar (a day that does not exist rolls over there, and is caught). */
function refTime(v: RV | undefined): Int64 {
  if (v?.t !== 'str') throw new Refused('time');
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(Z|([+-])(\d\d):(\d\d))$/.exec(v.s);
  if (!m) throw new Refused('time format');
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((k) => Number(m[k]));
  const date = new Date(0);
  date.setUTCFullYear(y!, mo! - 1, d);
  date.setUTCHours(h!, mi, s, 0);
  const same =
    date.getUTCFullYear() === y &&
    date.getUTCMonth() === mo! - 1 &&
    date.getUTCDate() === d &&
    date.getUTCHours() === h &&
    date.getUTCMinutes() === mi &&
    date.getUTCSeconds() === s;
  if (!same || mo! < 1 || mo! > 12) throw new Refused('not a real instant');
  let offsetMinutes = 0n;
  if (m[8] !== 'Z') {
    if (Number(m[10]) > 23 || Number(m[11]) > 59) throw new Refused('offset');
    offsetMinutes = (m[9] === '-' ? -1n : 1n) * BigInt(Number(m[10]) * 60 + Number(m[11]));
  }
  const frac = BigInt((m[7] ?? '').slice(0, 6).padEnd(6, '0'));
  return int64(BigInt(date.getTime()) * 1000n + frac - offsetMinutes * 60_000_000n);
}

function refCounter(v: RV | undefined): bigint {
  if (v?.t !== 'num' || !/^\d+$/.test(v.lit)) throw new Refused('counter');
  const n = BigInt(v.lit);
  if (n > 2n ** 63n - 1n) throw new Refused('beyond int64');
  return n;
}

const isNull = (v: RV | undefined) => v === undefined || (v.t === 'lit' && v.v === null);
const arr = (v: RV | undefined): RV[] => (v?.t === 'arr' ? v.a : fail('array'));
const obj = (v: RV | undefined): Map<string, RV> => (v?.t === 'obj' ? v.m : fail('object'));
function fail(what: string): never {
  throw new Refused(what);
}

type Contents = ReturnType<typeof contents>;

function refRead(source: PageSource, bytes: Uint8Array): Contents {
  const body = obj(refParse(bytes));
  const fw = source === 'v2_frameworks';
  const width = fw ? V2_FRAMEWORK_METRICS.length : METRIC_COLUMNS.length;
  const allowed = new Set<string>(fw ? V2_FRAMEWORK_METRICS : METRIC_COLUMNS);
  const out: Contents = {
    items: null,
    cursor: null,
    programIds: [],
    frameworkIds: [],
    periods: [],
    values: 0,
    rows: [],
  };
  const pagination = body.get('pagination');
  if (pagination?.t === 'obj' && !isNull(pagination.m.get('cursor'))) {
    const c = pagination.m.get('cursor')!;
    out.cursor = c.t === 'str' ? c.s : fail('cursor');
  }
  const list = body.get(fw ? 'frameworks' : 'programs');
  if (isNull(list)) return out;
  for (const [i, itemValue] of arr(list).entries()) {
    const item = obj(itemValue);
    out.programIds.push(refId(item.get('program_id')));
    out.frameworkIds.push(fw ? refId(item.get('framework_id')) : null);
    for (const periodValue of arr(item.get('periods'))) {
      const p = obj(periodValue);
      const index = out.periods.length;
      out.periods.push([
        refId(p.get('period_id')),
        refId(p.get('period_plan')),
        refTime(p.get('period_start')),
        isNull(p.get('period_end')) ? null : refTime(p.get('period_end')),
      ]);
      for (const bucketValue of arr(p.get('consumption'))) {
        const b = obj(bucketValue);
        const start = refTime(b.get('timeframe_start'));
        const end = refTime(b.get('timeframe_end'));
        const metrics: (Int64 | null)[] = new Array<Int64 | null>(width).fill(null);
        const named = new Set<string>();
        let reported = 0;
        for (const metricValue of arr(b.get('metrics'))) {
          const m = obj(metricValue);
          const name = refId(m.get('metric_name'));
          const value = refCounter(m.get('value'));
          if (!allowed.has(name) || named.has(name)) fail('metric');
          named.add(name);
          if (value === 0n) continue;
          metrics[METRIC_COLUMNS.indexOf(name)] = int64(value);
          reported++;
        }
        if (reported === 0) continue;
        out.values += reported;
        out.rows.push({ item: i, period: index, start, end, metrics });
      }
    }
  }
  out.items = arr(list).length;
  return out;
}

/** Everything a page's rows say, as plain data. */
function contents(p: PageRows) {
  const rows: { item: number; period: number; start: Int64; end: Int64; metrics: (Int64 | null)[] }[] = [];
  for (let r = 0; r < p.rows; r++) {
    const metrics = [];
    for (let m = 0; m < p.width; m++) metrics.push(p.metric(r, m));
    rows.push({ item: p.rowItem[r]!, period: p.rowPeriod[r]!, start: p.start(r), end: p.end(r), metrics });
  }
  return {
    items: p.items,
    cursor: p.cursor,
    programIds: [...p.programIds],
    frameworkIds: [...p.frameworkIds],
    periods: p.periodIds.map((id, i): [string, string, Int64, Int64 | null] => [
      id,
      p.periodPlans[i]!,
      p.periodStarts[i]!,
      p.periodEnds[i]!,
    ]),
    values: p.values,
    rows,
  };
}

// ---- Generated pages ---------------------------------------------------------------------------------

interface Bucket {
  start: string;
  end: string;
  metrics: [string, string][];
}
interface Period {
  id: string;
  plan: string;
  start: string;
  end: string | null | undefined;
  buckets: Bucket[];
}
interface Item {
  program: string;
  framework: string;
  periods: Period[];
}
interface Page {
  source: PageSource;
  items: Item[] | null;
  cursor: string | null | undefined;
}

const daysIn = (y: number, m: number) =>
  m === 2 ? ((y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;
const pad = (n: number, w = 2) => String(n).padStart(w, '0');

const timeArb = fc
  .record({
    y: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 2020, max: 2030 }) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 9999 }) },
      { weight: 1, arbitrary: fc.constantFrom(1969, 1970, 2199, 2200, 2000, 2100, 2024) },
    ),
    mo: fc.integer({ min: 1, max: 12 }),
    d: fc.nat(),
    h: fc.integer({ min: 0, max: 23 }),
    mi: fc.integer({ min: 0, max: 59 }),
    s: fc.integer({ min: 0, max: 59 }),
    frac: fc.option(fc.stringMatching(/^\d{1,9}$/), { freq: 5 }),
    zone: fc.oneof(
      { weight: 6, arbitrary: fc.constant('Z') },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 30, 45, 59))
          .map(([sg, h, m]) => `${sg}${pad(h)}:${pad(m)}`),
      },
    ),
  })
  .map(
    ({ y, mo, d, h, mi, s, frac, zone }) =>
      `${pad(y, 4)}-${pad(mo)}-${pad(1 + (d % daysIn(y, mo)))}T${pad(h)}:${pad(mi)}:${pad(s)}${frac === null ? '' : '.' + frac}${zone}`,
  );

const textArb = fc.string({
  minLength: 1,
  maxLength: 10,
  unit: fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...'abcxyz0189-_.:/ '.split('')) },
    { weight: 1, arbitrary: fc.constantFrom('é', '€', '😀', '\u2028', '"', '\\', '\u007f', '\ufeff') },
  ),
});

const EDGE_VALUES = [0n, 1n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 10n ** 15n - 1n, 10n ** 15n, 2n ** 63n - 1n];
const valueArb = fc
  .oneof(fc.constantFrom(...EDGE_VALUES), fc.bigInt(0n, 2n ** 63n - 1n), fc.bigInt(0n, 5000n))
  .map(String);

function pageArb(source: PageSource): fc.Arbitrary<Page> {
  const names = source === 'v2_frameworks' ? V2_FRAMEWORK_METRICS : METRIC_COLUMNS;
  const bucket = fc.record({
    start: timeArb,
    end: timeArb,
    metrics: fc
      .uniqueArray(fc.constantFrom(...names), { maxLength: 4 })
      .chain((ns) => fc.tuple(...ns.map((n) => fc.tuple(fc.constant(n), valueArb)))),
  });
  const period = fc.record({
    id: textArb,
    plan: textArb,
    start: timeArb,
    end: fc.oneof(fc.constant(undefined), fc.constant(null), timeArb),
    buckets: fc.array(bucket, { maxLength: 3 }),
  });
  const item = fc.record({ program: textArb, framework: textArb, periods: fc.array(period, { maxLength: 2 }) });
  return fc.record({
    source: fc.constant(source),
    items: fc.option(fc.array(item, { maxLength: 3 }), { freq: 12 }),
    cursor: fc.oneof(fc.constant(undefined), fc.constant(null), textArb),
  });
}

type Breakage =
  | { kind: 'truncate'; at: number }
  | { kind: 'utf8'; at: number; bytes: number[] }
  | { kind: 'time'; at: number; text: string }
  | { kind: 'duplicate'; at: number; same: boolean }
  | { kind: 'number'; at: number; text: string }
  | { kind: 'text'; at: number; text: string };

const BAD_UTF8 = [
  [0xff],
  [0x80],
  [0xc0, 0xaf],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xe0, 0x80, 0xaf],
];
const BAD_TIMES = [
  '2026-11-31T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2100-02-29T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-11-00T00:00:00Z',
  '2026-11-01T24:00:00Z',
  '2026-11-01T23:60:00Z',
  '2026-11-01T23:59:60Z',
  '2026-11-01T00:00:00+24:00',
  '2026-11-01T00:00:00+01:60',
  '2026-11-01 00:00:00Z',
  '2026-11-01T00:00:00',
  '2026-11-01T00:00:00.Z',
  '2026-11-1T00:00:00Z',
  '+2026-11-01T00:00:00Z',
  '2024-02-29T00:00:00Z',
];
const EXOTIC_NUMBERS = [
  '-0',
  '-1',
  '1.0',
  '1e2',
  '1E0',
  '0.0',
  '-0.0',
  '01',
  '00',
  '+1',
  '.5',
  '1.',
  'NaN',
  'Infinity',
  '0x10',
  '9223372036854775808',
  '-9223372036854775808',
  '18446744073709551616',
  '1e400',
  '"7"',
  'true',
  'null',
  '[1]',
  '9223372036854775807',
];
const BAD_TEXT = ['', '\\u0000', 'a\\u001fb', '\\ud800', 'x\\udc00', '\\ud83d\\ude00', 'tab\\there', '\\u00e9'];

const breakageArb: fc.Arbitrary<Breakage> = fc.oneof(
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('utf8' as const), at: fc.nat(), bytes: fc.constantFrom(...BAD_UTF8) }),
  fc.record({ kind: fc.constant('time' as const), at: fc.nat(), text: fc.constantFrom(...BAD_TIMES) }),
  fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), same: fc.boolean() }),
  fc.record({ kind: fc.constant('number' as const), at: fc.nat(), text: fc.constantFrom(...EXOTIC_NUMBERS) }),
  fc.record({ kind: fc.constant('text' as const), at: fc.nat(), text: fc.constantFrom(...BAD_TEXT) }),
);

/** Writes `page` as JSON text in the style `seed` picks, with `broken` applied; returns its bytes. */
function write(page: Page, seed: number, broken: Breakage | null): Buffer {
  const rnd = prng(seed);
  const plain = rnd() < 0.4; // written plainly (no escapes): the kind of page the scan reads
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const ws = () => (rnd() < 0.75 ? '' : pick([' ', '\n', '\t', '\r\n', '  ', ' \n\t ']));
  let times = 0;
  let numbers = 0;
  let texts = 0;
  let objects = 0;
  const str = (s: string): string => {
    let out = '"';
    for (const ch of s) {
      const code = ch.codePointAt(0)!;
      const units = ch.length === 2 ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [code];
      const unicode = () =>
        units
          .map(
            (u) =>
              '\\u' + (rnd() < 0.5 ? u.toString(16).padStart(4, '0') : u.toString(16).toUpperCase().padStart(4, '0')),
          )
          .join('');
      if (plain && ch !== '"' && ch !== '\\' && code >= 0x20) out += ch;
      else if (ch === '"' || ch === '\\' || code < 0x20)
        out += rnd() < 0.5 ? unicode() : ch === '"' ? '\\"' : ch === '\\' ? '\\\\' : unicode();
      else if (ch === '/' && rnd() < 0.3) out += '\\/';
      else out += rnd() < 0.08 ? unicode() : ch;
    }
    return out + '"';
  };
  const text = (s: string) => (broken?.kind === 'text' && texts++ === broken.at % 8 ? `"${broken.text}"` : str(s));
  const time = (s: string) => (broken?.kind === 'time' && times++ === broken.at % 6 ? `"${broken.text}"` : str(s));
  const number = (s: string) => (broken?.kind === 'number' && numbers++ === broken.at % 4 ? broken.text : s);
  const unknown = (depth: number): string => {
    const r = rnd();
    if (depth > 2 || r < 0.5)
      return pick([
        'null',
        'true',
        'false',
        '0',
        '-0',
        '1.5e-7',
        '-12',
        '12345678901234567890',
        '1E400',
        '""',
        '"é\\u00e9 \\ud800"',
        str('x y'),
      ]);
    if (r < 0.75)
      return `[${ws()}${Array.from({ length: Math.floor(rnd() * 3) }, () => unknown(depth + 1)).join(`${ws()},${ws()}`)}${ws()}]`;
    return object(
      Array.from({ length: Math.floor(rnd() * 3) }, (_, k): [string, string] => [`x_${k}`, unknown(depth + 1)]),
      [],
    );
  };
  /** An object of `members` (key, written value), in a shuffled order, with unknown members among them. */
  const object = (members: [string, string][], known: readonly string[]): string => {
    const all = members.filter(([, v]) => v !== undefined);
    if (rnd() < 0.5) all.sort(() => rnd() - 0.5);
    if (rnd() < 0.2) {
      const extra = pick(['x_note', 'x-meta', 'é', 'x_' + Math.floor(rnd() * 9)]);
      if (!known.includes(extra) && !all.some(([k]) => k === extra))
        all.splice(Math.floor(rnd() * (all.length + 1)), 0, [extra, unknown(0)]);
    }
    if (broken?.kind === 'duplicate' && objects++ === broken.at % 12 && all.length > 0) {
      const [k, v] = all[Math.floor(rnd() * all.length)]!;
      all.splice(Math.floor(rnd() * (all.length + 1)), 0, [k, broken.same ? v : unknown(0)]);
    }
    return `{${ws()}${all.map(([k, v]) => `${str(k)}${ws()}:${ws()}${v}`).join(`${ws()},${ws()}`)}${ws()}}`;
  };
  const list = (xs: string[]) => `[${ws()}${xs.join(`${ws()},${ws()}`)}${ws()}]`;
  const opt = (k: string, v: string | undefined): [string, string][] => (v === undefined ? [] : [[k, v]]);
  const fw = page.source === 'v2_frameworks';
  const items = page.items?.map((it) =>
    object(
      [
        ['program_id', text(it.program)],
        ...opt('framework_id', fw ? text(it.framework) : undefined),
        [
          'periods',
          list(
            it.periods.map((p) =>
              object(
                [
                  ['period_id', text(p.id)],
                  ['period_plan', text(p.plan)],
                  ['period_start', time(p.start)],
                  ...opt('period_end', p.end === undefined ? undefined : p.end === null ? 'null' : time(p.end)),
                  [
                    'consumption',
                    list(
                      p.buckets.map((b) =>
                        object(
                          [
                            ['timeframe_start', time(b.start)],
                            ['timeframe_end', time(b.end)],
                            [
                              'metrics',
                              list(
                                b.metrics.map(([n, v]) =>
                                  object(
                                    [
                                      ['metric_name', str(n)],
                                      ['value', number(v)],
                                    ],
                                    ['metric_name', 'value'],
                                  ),
                                ),
                              ),
                            ],
                          ],
                          ['timeframe_start', 'timeframe_end', 'metrics'],
                        ),
                      ),
                    ),
                  ],
                ],
                ['period_id', 'period_plan', 'period_start', 'period_end', 'consumption'],
              ),
            ),
          ),
        ],
      ],
      ['program_id', 'framework_id', 'periods'],
    ),
  );
  const pagination =
    page.cursor === undefined
      ? []
      : ([['pagination', object([['cursor', page.cursor === null ? 'null' : text(page.cursor)]], ['cursor'])]] as [
          string,
          string,
        ][]);
  const top = object(
    [[fw ? 'frameworks' : 'programs', items === undefined ? 'null' : list(items)], ...pagination],
    [fw ? 'frameworks' : 'programs', 'pagination'],
  );
  let bytes = Buffer.from(ws() + top + ws(), 'utf8');
  if (broken?.kind === 'truncate') bytes = bytes.subarray(0, broken.at % bytes.length);
  if (broken?.kind === 'utf8') {
    const quotes = [...bytes.keys()].filter((k) => bytes[k] === 0x22);
    const at = quotes[broken.at % quotes.length]! + 1;
    bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(broken.bytes), bytes.subarray(at)]);
  }
  return bytes;
}

// ---- The properties ------------------------------------------------------------------------------------

const SOURCES: PageSource[] = ['v2_programs', 'v2_frameworks'];
/** How pages were read, over a run: the reader's three paths, and refusals. */
const tally = { scan: 0, jsonParse: 0, lossless: 0, accepted: 0, refused: 0 };

/** `bytes` read by the real reader (scan first) and by the general way alone, each against the reference. */
function agrees(source: PageSource, bytes: Buffer): boolean {
  let expected: Contents | 'refused';
  try {
    expected = refRead(source, bytes);
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    expected = 'refused';
  }
  const reads: [string, () => PageRows][] = [
    ['readPage', () => readPage(source, bytes)],
    ['parsePage', () => parsePage(source, bytes)],
  ];
  for (const [name, read] of reads) {
    let got: Contents | 'refused';
    try {
      got = contents(read());
    } catch (err) {
      if (!(err instanceof PageShapeError)) throw err;
      got = 'refused';
    }
    expect(got, `${name} of ${source} page ${JSON.stringify(bytes.toString('latin1'))}`).toEqual(expected);
  }
  if (expected === 'refused') tally.refused++;
  else {
    tally.accepted++;
    if (scanPage(source, bytes) !== null) tally.scan++;
    else if (needsLossless(bytes.toString('utf8'))) tally.lossless++;
    else tally.jsonParse++;
  }
  return true;
}

describe('the page reader against a reference decoding (fast-check)', () => {
  it(
    `reads every valid page exactly as the reference does, on every path (${RUNS} cases per source)`,
    () => {
      for (const source of SOURCES) {
        fc.assert(
          fc.property(pageArb(source), fc.integer(), (page, style) => {
            const bytes = write(page, style, null);
            expect(() => refRead(source, bytes), 'the generator writes valid pages').not.toThrow();
            return agrees(source, bytes);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      }
      console.log(`fast-check valid pages: seed ${SEED}, ${RUNS * SOURCES.length} cases: ${JSON.stringify(tally)}`);
      // Each path was taken: the generator reaches them all.
      expect(Math.min(tally.scan, tally.jsonParse, tally.lossless)).toBeGreaterThan(0);
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    `refuses a broken page whenever the reference does, and reads the rest as it does (${RUNS} cases per source)`,
    () => {
      const before = { ...tally };
      for (const source of SOURCES) {
        fc.assert(
          fc.property(pageArb(source), fc.integer(), breakageArb, (page, style, broken) =>
            agrees(source, write(page, style, broken)),
          ),
          { seed: SEED, numRuns: RUNS },
        );
      }
      console.log(
        `fast-check broken pages: seed ${SEED}, ${RUNS * SOURCES.length} cases: ${tally.refused - before.refused} refused, ${tally.accepted - before.accepted} still valid`,
      );
      expect(tally.refused - before.refused).toBeGreaterThan(RUNS);
    },
    PROPERTY_TIMEOUT_MS,
  );
});

describe('explicit refusals on each of the three paths', () => {
  const page = JSON.stringify({
    programs: [
      {
        program_id: 'p-good',
        periods: [
          {
            period_id: 'pd-1',
            period_plan: 'launch',
            period_start: '2026-11-01T00:00:00Z',
            consumption: [
              {
                timeframe_start: '2026-11-20T00:00:00Z',
                timeframe_end: '2026-11-21T00:00:00Z',
                metrics: [{ metric_name: 'compute_unit_seconds', value: 7200 }],
              },
            ],
          },
        ],
      },
      {
        program_id: 'p-two',
        periods: [
          {
            period_id: 'pd-2',
            period_plan: 'scale',
            period_start: '2026-11-01T00:00:00Z',
            consumption: [
              {
                timeframe_start: '2026-11-20T00:00:00Z',
                timeframe_end: '2026-11-21T00:00:00Z',
                metrics: [{ metric_name: 'compute_unit_seconds', value: 60 }],
              },
            ],
          },
        ],
      },
    ],
  });
  const paths: [string, string, (b: Buffer) => void][] = [
    ['the scan', page, (b) => expect(scanPage('v2_programs', b)).not.toBeNull()],
    [
      'JSON.parse',
      page.replace('"p-good"', '"p-\\u0067ood"'),
      (b) => expect([scanPage('v2_programs', b), needsLossless(b.toString())]).toEqual([null, false]),
    ],
    [
      'lossless-json',
      page.replace('"value":7200', '"value":1234567890123456'),
      (b) => expect([scanPage('v2_programs', b), needsLossless(b.toString())]).toEqual([null, true]),
    ],
  ];
  const splice = (text: string, find: string, bytes: Buffer) => {
    const at = text.indexOf(find);
    return Buffer.concat([Buffer.from(text.slice(0, at)), bytes, Buffer.from(text.slice(at + find.length))]);
  };
  const broken: [string, (t: string) => Buffer, RegExp][] = [
    [
      'invalid UTF-8 in a plan',
      (t) => splice(t, '"launch"', Buffer.from([0x22, 0xc3, 0x28, 0x22])),
      /^\$\.programs\[0\]\.periods\[0\]\.period_plan: not valid UTF-8/,
    ],
    [
      'an overlong encoding in an unknown member',
      (t) =>
        splice(t, '"scale"', Buffer.from([0x22, 0x73, 0x22, 0x2c, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22])),
      /^\$\.programs\[1\]\.periods\[0\]\.n: not valid UTF-8/,
    ],
    [
      'a surrogate encoded as bytes',
      (t) => splice(t, '"p-two"', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])),
      /^\$\.programs\[1\]\.program_id: not valid UTF-8/,
    ],
    [
      '31 November',
      (t) => Buffer.from(t.replace('"2026-11-20T00:00:00Z"', '"2026-11-31T00:00:00Z"')),
      /^\$\.programs\[0\]\.periods\[0\]\.consumption\[0\]\.timeframe_start: expected an ISO 8601 date-time with a zone naming a real instant/,
    ],
    [
      '29 February 2026',
      (t) => Buffer.from(t.replace('"period_start":"2026-11-01T00:00:00Z"', '"period_start":"2026-02-29T00:00:00Z"')),
      /^\$\.programs\[0\]\.periods\[0\]\.period_start: expected/,
    ],
    [
      '24:00',
      (t) => Buffer.from(t.replace('"2026-11-21T00:00:00Z"', '"2026-11-20T24:00:00Z"')),
      /timeframe_end: expected/,
    ],
    [
      '"value" twice, equal',
      (t) => Buffer.from(t.replace('"value":60', '"value":60,"value":60')),
      /^\$\.programs\[1\]\.periods\[0\]\.consumption\[0\]\.metrics\[0\]\.value: the key "value" is given twice/,
    ],
    [
      'an unknown key twice',
      (t) => Buffer.from(t.replace('"period_plan":"scale"', '"period_plan":"scale","x":1,"x":1')),
      /^\$\.programs\[1\]\.periods\[0\]\.x: the key "x" is given twice/,
    ],
    [
      'a key twice, once escaped',
      (t) => Buffer.from(t.replace('"period_plan":"scale"', '"period_plan":"scale","period\\u005fplan":"scale"')),
      /^\$\.programs\[1\]\.periods\[0\]\.period_plan: the key "period_plan" is given twice/,
    ],
    [
      'a metric twice',
      (t) =>
        Buffer.from(
          t.replace(
            '{"metric_name":"compute_unit_seconds","value":60}',
            '{"metric_name":"compute_unit_seconds","value":60},{"metric_name":"compute_unit_seconds","value":0}',
          ),
        ),
      /metrics\[1\]: compute_unit_seconds is given twice in one bucket/,
    ],
    [
      '-0',
      (t) => Buffer.from(t.replace('"value":60', '"value":-0')),
      /^\$\.programs\[1\]\.periods\[0\]\.consumption\[0\]\.metrics\[0\]\.value: expected a non-negative integer, got -0/,
    ],
    [
      'a lone surrogate in an id',
      (t) => Buffer.from(t.replace('"p-two"', '"p-\\ud800"')),
      /^\$\.programs\[1\]\.program_id: expected text without control characters or lone surrogates/,
    ],
    [
      'a number as the cursor',
      (t) => Buffer.from(t.replace('{"programs"', '{"pagination":{"cursor":12},"programs"')),
      /^\$\.pagination\.cursor: expected a string or null, got 12/,
    ],
  ];
  for (const [path, text, isPath] of paths) {
    it(`${path}: reads the page, and refuses ${broken.map((b) => b[0]).join(', ')}`, () => {
      const good = Buffer.from(text);
      isPath(good);
      expect(readPage('v2_programs', good).values).toBe(2);
      for (const [what, breakIt, message] of broken) {
        const bad = breakIt(text);
        for (const read of [readPage, parsePage])
          expect(() => read('v2_programs', bad), `${what} (${read.name})`).toThrow(PageShapeError);
        expect(() => readPage('v2_programs', bad), what).toThrow(message);
      }
    });
  }
});
