// The fast way to read a consumption page: one pass over its bytes straight into the page's rows, with
// no JavaScript object per bucket or metric (JSON.parse of a 16 MB page makes about 250,000 objects;
// BENCHMARKS.md, "Pages scanned from their bytes (2026-11-23)"). The scan reads only what it can read
// exactly and gives up (null) on anything else: an escape in a key or a value it reads, a byte beyond
// ASCII in an id, a number that is not a plain integer of at most 15 digits, a time not written
// YYYY-MM-DDTHH:MM:SSZ, a key given twice (known or not), bytes that are not UTF-8, any departure from
// the documented shape or from JSON. The page then goes the general way (readPage.ts parsePage), which
// gives the same rows or names the offence: the scan is only faster. Bytes beyond ASCII are checked only
// where they occur, so an ASCII page costs one comparison per byte more.
import { V1_METRICS, V2_FRAMEWORK_METRICS, V2_PROGRAM_METRICS } from '../contract/api.js';
import { utf8SequenceLength } from '../contract/jsonText.js';
import type { Source } from '../domain/granularity.js';
import { PageRows } from './pageRows.js';

/** Thrown inside the scan to give up; caught at its top. */
const GIVE_UP = Symbol('give up');

const enum Ch {
  Tab = 9,
  Newline = 10,
  Return = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  UpperE = 69,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  LowerE = 101,
  LBrace = 123,
  RBrace = 125,
}

const ascii = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));

/** A set of keys, matched on the bytes of a key as written (no escapes). */
class Keys {
  private readonly bytes: Uint8Array[];
  /** By length, the indexes of the keys of that length (the metric names all differ in length). */
  private readonly byLength: number[][] = [];

  constructor(names: readonly string[]) {
    this.bytes = names.map(ascii);
    this.bytes.forEach((key, k) => (this.byLength[key.length] ??= []).push(k));
  }

  /** The index of the key in b[start, end), or -1. */
  match(b: Uint8Array, start: number, end: number): number {
    const candidates = this.byLength[end - start];
    if (candidates === undefined) return -1;
    outer: for (let c = 0; c < candidates.length; c++) {
      const k = candidates[c]!;
      const key = this.bytes[k]!;
      for (let i = key.length - 1; i >= 0; i--) if (b[start + i] !== key[i]) continue outer;
      return k;
    }
    return -1;
  }
}

const PAGE_KEYS = {
  programs: new Keys(['programs', 'pagination']),
  frameworks: new Keys(['frameworks', 'pagination']),
};
const CURSOR_KEYS = new Keys(['cursor']);
const ITEM_KEYS = new Keys(['program_id', 'framework_id', 'periods']);
const PERIOD_KEYS = new Keys(['period_id', 'period_plan', 'period_start', 'period_end', 'consumption']);
const V2_BUCKET_KEYS = new Keys(['timeframe_start', 'timeframe_end', 'metrics']);
const V1_BUCKET_KEYS = new Keys(['timeframe_start', 'timeframe_end', ...V1_METRICS]);
const METRIC_KEYS = new Keys(['metric_name', 'value']);
const NO_KEYS = new Keys([]);

/** The nesting skipValue reads; deeper is left to the general way (contract/jsonText.ts MAX_DEPTH). */
const SKIP_DEPTH = 400;

/** Days from 1970-01-01 to the first of each month, in a common year. */
const MONTH_DAYS = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];

/**
 * Scans a consumption page of `source`. Returns its rows, or null when the page holds anything the scan
 * does not read exactly (see the top of this file): the caller then reads it the general way.
 */
export function scanPage(source: Source, page: Buffer): PageRows | null {
  const scan = new PageScan(source, page);
  try {
    scan.page();
    return scan.out;
  } catch (err) {
    if (err === GIVE_UP) return null;
    throw err;
  }
}

class PageScan {
  private p = 0;
  /** Where the last key read by key() starts and ends (its quotes excluded). */
  private keyStart = 0;
  private keyEnd = 0;
  readonly out: PageRows;
  private readonly framework: boolean;
  private readonly v1: boolean;
  /** The metric names a v2 bucket may report, as METRIC_COLUMNS indexes (the first six, or all eight v2 and the seven v1). */
  private readonly metricNames: Keys;

  constructor(
    source: Source,
    private readonly b: Buffer,
  ) {
    this.framework = source === 'v2_frameworks';
    this.v1 = source === 'v1_programs';
    // The columns (pageRows.ts METRIC_COLUMNS) are the v2 metrics, then the v1 ones: a name's index is its column.
    this.metricNames = new Keys(this.framework ? V2_FRAMEWORK_METRICS : [...V2_PROGRAM_METRICS, ...V1_METRICS]);
    // A bucket row takes 250-350 bytes of a page (two times, its metrics' names and values): sized so that
    // a page's rows rarely outgrow the first arrays.
    this.out = new PageRows(
      this.framework ? V2_FRAMEWORK_METRICS.length : V2_PROGRAM_METRICS.length + V1_METRICS.length,
      Math.max(64, b.length >> 8),
    );
  }

  page(): void {
    const listKeys = this.framework ? PAGE_KEYS.frameworks : PAGE_KEYS.programs;
    let seen = 0;
    let others: Set<string> | null = null;
    this.open(Ch.LBrace);
    for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
      const k = this.key(listKeys);
      if (k >= 0) seen = this.once(seen, k);
      else others = this.other(others);
      if (k === 0) this.list();
      else if (k === 1) this.pagination();
      else this.skipValue();
    }
    this.ws();
    if (this.p !== this.b.length) throw GIVE_UP;
  }

  private list(): void {
    if (this.nullLiteral()) return;
    this.open(Ch.LBracket);
    let n = 0;
    for (let more = this.first(Ch.RBracket); more; more = this.next(Ch.RBracket)) this.item(n++);
    this.out.items = n;
  }

  private pagination(): void {
    this.ws();
    if (this.b[this.p] !== Ch.LBrace) {
      this.skipValue(); // not an object: no cursor, as the general way reads it
      return;
    }
    this.p++;
    let seen = 0;
    let others: Set<string> | null = null;
    for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
      const k = this.key(CURSOR_KEYS);
      if (k < 0) {
        others = this.other(others);
        this.skipValue();
        continue;
      }
      seen = this.once(seen, k);
      this.out.cursor = this.nullLiteral() ? null : this.string(false);
    }
  }

  private item(index: number): void {
    const out = this.out;
    let seen = 0;
    let program: string | undefined;
    let framework: string | null = null;
    let others: Set<string> | null = null;
    this.open(Ch.LBrace);
    for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
      const k = this.key(ITEM_KEYS);
      if (k < 0) {
        others = this.other(others);
        this.skipValue();
        continue;
      }
      seen = this.once(seen, k);
      if (k === 1 && !this.framework)
        this.skipValue(); // not read on a programs page, yet a key like any other
      else if (k === 0) program = this.string(true);
      else if (k === 1) framework = this.string(true);
      else this.periods(index);
    }
    if (program === undefined || (this.framework && framework === null) || (seen & 4) === 0) throw GIVE_UP;
    out.programIds.push(program);
    out.frameworkIds.push(framework);
  }

  private periods(item: number): void {
    this.open(Ch.LBracket);
    for (let more = this.first(Ch.RBracket); more; more = this.next(Ch.RBracket)) this.period(item);
  }

  private period(item: number): void {
    const out = this.out;
    const index = out.periodIds.length;
    let seen = 0;
    let id: string | undefined;
    let plan: string | undefined;
    let start: number | undefined;
    let end: number | null = null;
    let others: Set<string> | null = null;
    this.open(Ch.LBrace);
    for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
      const k = this.key(PERIOD_KEYS);
      if (k < 0) {
        others = this.other(others);
        this.skipValue();
        continue;
      }
      seen = this.once(seen, k);
      if (k === 0) id = this.string(true);
      else if (k === 1) plan = this.string(true);
      else if (k === 2) start = this.time();
      else if (k === 3) end = this.nullLiteral() ? null : this.time();
      else this.consumption(item, index);
    }
    if (id === undefined || plan === undefined || start === undefined || (seen & 16) === 0) throw GIVE_UP;
    out.periodIds.push(id);
    out.periodPlans.push(plan);
    out.periodStarts.push(start);
    out.periodEnds.push(end);
  }

  private consumption(item: number, period: number): void {
    this.open(Ch.LBracket);
    for (let more = this.first(Ch.RBracket); more; more = this.next(Ch.RBracket)) this.bucket(item, period);
  }

  private bucket(item: number, period: number): void {
    const out = this.out;
    const r = out.beginRow();
    const base = r * out.width;
    let seen = 0;
    let reported = 0;
    let start: number | undefined;
    let end: number | undefined;
    let others: Set<string> | null = null;
    this.open(Ch.LBrace);
    for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
      const k = this.key(this.v1 ? V1_BUCKET_KEYS : V2_BUCKET_KEYS);
      if (k < 0) {
        others = this.other(others);
        this.skipValue();
        continue;
      }
      seen = this.once(seen, k);
      if (k === 0) start = this.time();
      else if (k === 1) end = this.time();
      else if (!this.v1) reported += this.metrics(base);
      else if (!this.nullLiteral()) {
        // A v1 metric field, k - 2 in V1_METRICS order; the v1 columns follow the v2 ones.
        const v = this.counter();
        if (v !== 0) {
          out.rowMetrics[base + V2_PROGRAM_METRICS.length + k - 2] = v;
          reported++;
        }
      }
    }
    if (start === undefined || end === undefined || (!this.v1 && (seen & 4) === 0)) throw GIVE_UP;
    if (reported === 0) return; // nothing reported: no row
    out.finishRow(r, item, period, start, end, reported);
  }

  /** A v2 bucket's metrics into the row at `base`; returns how many were non-zero. */
  private metrics(base: number): number {
    const cells = this.out.rowMetrics;
    let reported = 0;
    let named = 0; // the columns named, as bits: a metric given twice (whatever its values) is left to the general way
    this.open(Ch.LBracket);
    for (let more = this.first(Ch.RBracket); more; more = this.next(Ch.RBracket)) {
      let seen = 0;
      let column = -1;
      let value = -1;
      let others: Set<string> | null = null;
      this.open(Ch.LBrace);
      for (let m = this.first(Ch.RBrace); m; m = this.next(Ch.RBrace)) {
        const k = this.key(METRIC_KEYS);
        if (k < 0) {
          others = this.other(others);
          this.skipValue();
          continue;
        }
        seen = this.once(seen, k);
        if (k === 0) column = this.metricName();
        else value = this.counter();
      }
      if (seen !== 3 || named & (1 << column)) throw GIVE_UP;
      named |= 1 << column;
      if (value === 0) continue; // an explicit 0 is stored as absent
      cells[base + column] = value;
      reported++;
    }
    return reported;
  }

  // ---- JSON pieces -------------------------------------------------------------------------------

  /** Marks key `k` seen; a key given twice is left to the general way, which refuses it naming its path. */
  private once(seen: number, k: number): number {
    const bit = 1 << k;
    if (seen & bit) throw GIVE_UP;
    return seen | bit;
  }

  /** Marks the last key read, one the scan does not read, seen in its object (`seen`: those before it, made on the first). */
  private other(seen: Set<string> | null): Set<string> {
    // Its bytes as written: key() leaves a key with an escape to the general way, so equal keys have equal bytes.
    const key = this.b.toString('latin1', this.keyStart, this.keyEnd);
    const keys = seen ?? new Set<string>();
    if (keys.has(key)) throw GIVE_UP;
    keys.add(key);
    return keys;
  }

  private ws(): void {
    const b = this.b;
    let p = this.p;
    let c = b[p];
    while (c === Ch.Space || c === Ch.Newline || c === Ch.Return || c === Ch.Tab) c = b[++p];
    this.p = p;
  }

  private open(ch: number): void {
    this.ws();
    if (this.b[this.p] !== ch) throw GIVE_UP;
    this.p++;
  }

  /** After '{' or '[': whether a member or element follows (else `close`, '}' or ']', is consumed). */
  private first(close: number): boolean {
    this.ws();
    if (this.b[this.p] === close) {
      this.p++;
      return false;
    }
    return true;
  }

  /** After a member or element: whether another follows (',' consumed) or `close` ends it (consumed). */
  private next(close: number): boolean {
    this.ws();
    const c = this.b[this.p++];
    if (c === Ch.Comma) return true;
    if (c === close) return false;
    throw GIVE_UP;
  }

  /** A member's key and its ':'; returns its index in `keys`, or -1 for a key the scan does not read. */
  private key(keys: Keys): number {
    // An escaped key may spell a known one: quoted() leaves it to the general way.
    const start = this.quoted(false);
    this.keyStart = start;
    this.keyEnd = this.p - 1;
    const k = keys.match(this.b, start, this.p - 1);
    this.open(Ch.Colon);
    return k;
  }

  /** A string of printable ASCII without escapes; `id`: non-empty. */
  private string(id: boolean): string {
    const start = this.quoted(true);
    const end = this.p - 1;
    if (id && end === start) throw GIVE_UP;
    return this.b.toString('latin1', start, end);
  }

  private metricName(): number {
    const start = this.quoted(false);
    const k = this.metricNames.match(this.b, start, this.p - 1);
    if (k < 0) throw GIVE_UP; // not a metric this request asked for: the general way names it
    return k;
  }

  /**
   * A string without escapes or control characters (`ascii`: nor bytes beyond printable ASCII; else in
   * well-formed UTF-8), passed over; returns where its text starts (it ends just before this.p, at the
   * closing quote).
   */
  private quoted(ascii: boolean): number {
    this.ws();
    const b = this.b;
    if (b[this.p] !== Ch.Quote) throw GIVE_UP;
    const start = this.p + 1;
    let p = start;
    for (let c = b[p]; c !== Ch.Quote; c = b[++p]) {
      if (c === undefined || c === Ch.Backslash || c < Ch.Space) throw GIVE_UP;
      if (c > 126) p = this.wideChar(ascii, p);
    }
    this.p = p + 1;
    return start;
  }

  /** A non-negative integer literal of at most 15 digits (exact as a double). */
  private counter(): number {
    this.ws();
    const b = this.b;
    let p = this.p;
    let c = b[p]!;
    if (c < Ch.Zero || c > Ch.Nine) throw GIVE_UP;
    const start = p;
    let v = 0;
    do {
      v = v * 10 + (c - Ch.Zero);
      c = b[++p]!;
    } while (c >= Ch.Zero && c <= Ch.Nine);
    const digits = p - start;
    if (digits > 15 || (digits > 1 && b[start] === Ch.Zero) || c === Ch.Dot || c === Ch.LowerE || c === Ch.UpperE)
      throw GIVE_UP;
    this.p = p;
    return v;
  }

  /** "YYYY-MM-DDTHH:MM:SSZ" as microseconds since the epoch: a real date and time of 1970-2199, nothing else. */
  private time(): number {
    this.ws();
    const b = this.b;
    const p = this.p;
    if (
      b[p] !== Ch.Quote ||
      b[p + 21] !== Ch.Quote ||
      b[p + 5] !== Ch.Minus ||
      b[p + 8] !== Ch.Minus ||
      b[p + 11] !== 84 ||
      b[p + 14] !== Ch.Colon ||
      b[p + 17] !== Ch.Colon ||
      b[p + 20] !== 90
    ) {
      throw GIVE_UP;
    }
    const year = this.digits(p + 1, 4);
    const month = this.digits(p + 6, 2);
    const day = this.digits(p + 9, 2);
    const hour = this.digits(p + 12, 2);
    const minute = this.digits(p + 15, 2);
    const second = this.digits(p + 18, 2);
    const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
    const monthLength =
      month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
    if (
      year < 1970 ||
      year > 2199 ||
      month < 1 ||
      month > 12 ||
      day < 1 ||
      day > monthLength ||
      hour > 23 ||
      minute > 59 ||
      second > 59
    )
      throw GIVE_UP;
    // Days since 1970-01-01: whole years, their leap days (a leap day falls before 1 March), the month, the day.
    const y = year - 1970;
    const leapDays = Math.floor((year - 1969) / 4) - Math.floor((year - 1901) / 100) + Math.floor((year - 1601) / 400);
    const days = y * 365 + leapDays + MONTH_DAYS[month - 1]! + (leap && month > 2 ? 1 : 0) + day - 1;
    this.p = p + 22;
    return ((days * 24 + hour) * 60 + minute) * 60_000_000 + second * 1_000_000;
  }

  private digits(at: number, n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const d = this.b[at + i]! - Ch.Zero;
      if (d < 0 || d > 9) throw GIVE_UP;
      v = v * 10 + d;
    }
    return v;
  }

  private nullLiteral(): boolean {
    this.ws();
    const b = this.b;
    const p = this.p;
    if (b[p] === 110 && b[p + 1] === 117 && b[p + 2] === 108 && b[p + 3] === 108) {
      this.p = p + 4;
      return true;
    }
    return false;
  }

  /**
   * Any JSON value, checked as the general way checks it (keys once per object), and passed over.
   * `depth`: the objects and arrays it lies in below the member skipped; deeper than SKIP_DEPTH (far
   * below the general way's MAX_DEPTH, whatever the member's own depth) is left to the general way.
   */
  private skipValue(depth = 0): void {
    this.ws();
    const b = this.b;
    const c = b[this.p];
    if ((c === Ch.LBrace || c === Ch.LBracket) && depth >= SKIP_DEPTH) throw GIVE_UP;
    if (c === Ch.LBrace) {
      this.p++;
      let others: Set<string> | null = null;
      for (let more = this.first(Ch.RBrace); more; more = this.next(Ch.RBrace)) {
        this.key(NO_KEYS);
        others = this.other(others);
        this.skipValue(depth + 1);
      }
    } else if (c === Ch.LBracket) {
      this.p++;
      for (let more = this.first(Ch.RBracket); more; more = this.next(Ch.RBracket)) this.skipValue(depth + 1);
    } else if (c === Ch.Quote) {
      this.skipString();
    } else if (c === Ch.Minus || (c !== undefined && c >= Ch.Zero && c <= Ch.Nine)) {
      this.skipNumber();
    } else if (!this.literal('true') && !this.literal('false') && !this.nullLiteral()) {
      throw GIVE_UP;
    }
  }

  private literal(word: 'true' | 'false'): boolean {
    const b = this.b;
    for (let i = 0; i < word.length; i++) if (b[this.p + i] !== word.charCodeAt(i)) return false;
    this.p += word.length;
    return true;
  }

  /** The last byte of a character beyond ASCII starting at `p`; gives up when `ascii`, or when its bytes are not UTF-8. */
  private wideChar(ascii: boolean, p: number): number {
    if (ascii) throw GIVE_UP;
    if (this.b[p] === 127) return p;
    const n = utf8SequenceLength(this.b, p);
    if (n === 0) throw GIVE_UP;
    return p + n - 1;
  }

  /** A string, escapes checked, bytes beyond ASCII checked as UTF-8. */
  private skipString(): void {
    const b = this.b;
    let p = this.p + 1;
    for (let c = b[p]; c !== Ch.Quote; c = b[++p]) {
      if (c === undefined || c < Ch.Space) throw GIVE_UP;
      if (c > 126) p = this.wideChar(false, p);
      else if (c === Ch.Backslash) {
        const e = b[++p];
        if (e === 117) {
          for (let i = 1; i <= 4; i++) {
            const h = b[p + i];
            const hex =
              h !== undefined && ((h >= Ch.Zero && h <= Ch.Nine) || (h >= 65 && h <= 70) || (h >= 97 && h <= 102));
            if (!hex) throw GIVE_UP;
          }
          p += 4;
        } else if (
          e !== Ch.Quote &&
          e !== Ch.Backslash &&
          e !== 47 &&
          e !== 98 &&
          e !== 102 &&
          e !== 110 &&
          e !== 114 &&
          e !== 116
        ) {
          throw GIVE_UP;
        }
      }
    }
    this.p = p + 1;
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private skipNumber(): void {
    const b = this.b;
    let p = this.p;
    const isDigit = (c: number | undefined) => c !== undefined && c >= Ch.Zero && c <= Ch.Nine;
    if (b[p] === Ch.Minus) p++;
    if (b[p] === Ch.Zero) p++;
    else if (isDigit(b[p])) while (isDigit(b[p])) p++;
    else throw GIVE_UP;
    if (b[p] === Ch.Dot) {
      p++;
      if (!isDigit(b[p])) throw GIVE_UP;
      while (isDigit(b[p])) p++;
    }
    if (b[p] === Ch.LowerE || b[p] === Ch.UpperE) {
      p++;
      if (b[p] === Ch.Plus || b[p] === Ch.Minus) p++;
      if (!isDigit(b[p])) throw GIVE_UP;
      while (isDigit(b[p])) p++;
    }
    this.p = p;
  }
}
