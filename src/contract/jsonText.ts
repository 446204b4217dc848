// What an API answer's text must be before anything of it is read (ARCHITECTURE.md, "What is refused"):
// JSON by RFC 8259 in UTF-8, checked to the last byte. JSON.parse would take a decoded string in which
// invalid bytes had become U+FFFD, and keeps the last of a key given twice; lossless-json refuses a
// duplicated key only when the two values differ. So both readers of a page's text run after
// checkJsonText, which refuses what neither of them would: bytes that are not UTF-8 and duplicated
// keys; and times are read by realInstant, not Date.parse (which rolls 31 November into December).

/** Where and why a text is refused: a JSONPath-like location ($.programs[3].period_id), the problem. */
export interface TextOffence {
  path: string;
  problem: string;
}

/**
 * The length of the well-formed UTF-8 sequence starting with the byte at `p` (a byte >= 0x80), or 0
 * when the bytes there are not one (Unicode 15, table 3-7: no overlong forms, no surrogates, at most
 * U+10FFFF).
 */
export function utf8SequenceLength(b: Uint8Array, p: number): number {
  const c = b[p]!;
  const cont = (q: number, lo = 0x80, hi = 0xbf) => {
    const x = b[q];
    return x !== undefined && x >= lo && x <= hi;
  };
  if (c >= 0xc2 && c <= 0xdf) return cont(p + 1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const lo = c === 0xe0 ? 0xa0 : 0x80;
    const hi = c === 0xed ? 0x9f : 0xbf;
    return cont(p + 1, lo, hi) && cont(p + 2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const lo = c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xf4 ? 0x8f : 0xbf;
    return cont(p + 1, lo, hi) && cont(p + 2) && cont(p + 3) ? 4 : 0;
  }
  return 0;
}

/** Objects and arrays nested deeper than this are refused (a reader's stack is not the API's to spend). */
export const MAX_DEPTH = 512;

class Refusal {
  constructor(readonly problem: string) {}
}

/**
 * Checks that `b` is one JSON value by RFC 8259, in well-formed UTF-8, with no object holding a key twice
 * (compared after unescaping) and no nesting deeper than MAX_DEPTH. Returns null, or the first offence
 * in document order with the path where it lies.
 */
export function checkJsonText(b: Uint8Array): TextOffence | null {
  const check = new TextCheck(b);
  try {
    check.value(0);
    check.ws();
    if (check.p < b.length) throw new Refusal(`unexpected ${check.show()} after the JSON value`);
    return null;
  } catch (err) {
    if (err instanceof Refusal) return { path: check.path(), problem: err.problem };
    throw err;
  }
}

/** A key as it appears in a path: `.name`, or `["any text"]`. */
export function pathKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

class TextCheck {
  p = 0;
  private readonly at: (string | number)[] = [];

  constructor(private readonly b: Uint8Array) {}

  path(): string {
    return '$' + this.at.map((s) => (typeof s === 'number' ? `[${s}]` : pathKey(s))).join('');
  }

  show(): string {
    const c = this.b[this.p];
    if (c === undefined) return 'end of text';
    return c >= 0x21 && c <= 0x7e
      ? `'${String.fromCharCode(c)}' at byte ${this.p}`
      : `byte 0x${c.toString(16).padStart(2, '0')} at byte ${this.p}`;
  }

  ws(): void {
    const b = this.b;
    let c = b[this.p];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = b[++this.p];
  }

  value(depth: number): void {
    this.ws();
    const c = this.b[this.p];
    if (c === 0x7b) this.object(depth + 1);
    else if (c === 0x5b) this.array(depth + 1);
    else if (c === 0x22) this.string(false);
    else if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) this.number();
    else if (!this.word('true') && !this.word('false') && !this.word('null'))
      throw new Refusal(`not JSON: unexpected ${this.show()}`);
  }

  private object(depth: number): void {
    if (depth > MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH}`);
    this.p++;
    const keys = new Set<string>();
    this.ws();
    if (this.b[this.p] === 0x7d) {
      this.p++;
      return;
    }
    for (;;) {
      this.ws();
      if (this.b[this.p] !== 0x22) throw new Refusal(`not JSON: expected a key, got ${this.show()}`);
      const key = this.string(true)!;
      this.at.push(key);
      if (keys.has(key)) throw new Refusal(`the key "${key}" is given twice in one object`);
      keys.add(key);
      this.ws();
      if (this.b[this.p] !== 0x3a) throw new Refusal(`not JSON: expected ':', got ${this.show()}`);
      this.p++;
      this.value(depth);
      this.at.pop();
      if (this.close(0x7d)) return;
    }
  }

  private array(depth: number): void {
    if (depth > MAX_DEPTH) throw new Refusal(`nested deeper than ${MAX_DEPTH}`);
    this.p++;
    this.ws();
    if (this.b[this.p] === 0x5d) {
      this.p++;
      return;
    }
    for (let i = 0; ; i++) {
      this.at.push(i);
      this.value(depth);
      this.at.pop();
      if (this.close(0x5d)) return;
    }
  }

  /** After a member or element: true at the closing byte (consumed), false after a comma. */
  private close(closing: number): boolean {
    this.ws();
    const c = this.b[this.p];
    if (c === closing) {
      this.p++;
      return true;
    }
    if (c === 0x2c) {
      this.p++;
      return false;
    }
    throw new Refusal(`not JSON: expected ',' or '${String.fromCharCode(closing)}', got ${this.show()}`);
  }

  /** A string, its escapes and UTF-8 checked; returns its text when `text` (a key), else undefined. */
  private string(text: boolean): string | undefined {
    const b = this.b;
    const start = ++this.p;
    let escaped = false;
    let p = start;
    for (let c = b[p]; c !== 0x22; c = b[p]) {
      if (c === undefined) throw new Refusal('not JSON: a string is not closed before the end of the text');
      if (c < 0x20)
        throw new Refusal(`not JSON: control byte 0x${c.toString(16).padStart(2, '0')} inside a string at byte ${p}`);
      if (c === 0x5c) {
        escaped = true;
        const e = b[p + 1];
        if (e === 0x75) {
          for (let i = 2; i <= 5; i++)
            if (!isHex(b[p + i])) throw new Refusal(`not JSON: a \\u escape without four hex digits at byte ${p}`);
          p += 6;
        } else if (
          e === 0x22 ||
          e === 0x5c ||
          e === 0x2f ||
          e === 0x62 ||
          e === 0x66 ||
          e === 0x6e ||
          e === 0x72 ||
          e === 0x74
        ) {
          p += 2;
        } else {
          throw new Refusal(`not JSON: an invalid escape at byte ${p}`);
        }
      } else if (c >= 0x80) {
        const n = utf8SequenceLength(b, p);
        if (n === 0)
          throw new Refusal(`not valid UTF-8 at byte ${p} (0x${c.toString(16)}): the text must be UTF-8 (RFC 8259)`);
        p += n;
      } else {
        p++;
      }
    }
    this.p = p + 1;
    if (!text) return undefined;
    const raw = Buffer.from(b.buffer, b.byteOffset + start, p - start).toString('utf8');
    return escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
  }

  /** -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private number(): void {
    const b = this.b;
    let p = this.p;
    const bad = () => new Refusal(`not JSON: a malformed number at byte ${this.p}`);
    if (b[p] === 0x2d) p++;
    if (b[p] === 0x30) p++;
    else if (isDigit(b[p])) while (isDigit(b[p])) p++;
    else throw bad();
    if (b[p] === 0x2e) {
      if (!isDigit(b[++p])) throw bad();
      while (isDigit(b[p])) p++;
    }
    if (b[p] === 0x65 || b[p] === 0x45) {
      p++;
      if (b[p] === 0x2b || b[p] === 0x2d) p++;
      if (!isDigit(b[p])) throw bad();
      while (isDigit(b[p])) p++;
    }
    this.p = p;
  }

  private word(w: string): boolean {
    for (let i = 0; i < w.length; i++) if (this.b[this.p + i] !== w.charCodeAt(i)) return false;
    this.p += w.length;
    return true;
  }
}

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isHex = (c: number | undefined) =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66));

const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/** Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * An RFC 3339 date-time with a zone ('Z' or +hh:mm) as microseconds since the epoch (digits beyond the
 * microsecond dropped), or null unless every field names a real instant: month 1-12, a day of that
 * month (29 February only in a leap year), hour 0-23, minute and second 0-59 (no leap second), a zone
 * offset of at most 23:59.
 */
export function realInstant(s: string): bigint | null {
  const m = TIME.exec(s);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (
    month! < 1 ||
    month! > 12 ||
    day! < 1 ||
    day! > daysInMonth(year!, month!) ||
    hour! > 23 ||
    minute! > 59 ||
    second! > 59
  )
    return null;
  let offset = 0;
  if (m[8] !== undefined) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const minutes = (daysFromCivil(year!, month!, day!) * 24 + hour!) * 60 + minute! - offset;
  const micros = (m[7] ?? '').slice(0, 6).padEnd(6, '0');
  return (BigInt(minutes) * 60n + BigInt(second!)) * 1_000_000n + BigInt(micros);
}
