// JSON as the API writes it: times as 'YYYY-MM-DDTHH:mm:ssZ', int64 values as bare integer literals
// even beyond 2^53. Consumption pages (up to ~11 MB) are written as ASCII bytes straight into a
// buffer (ByteWriter): JSON.stringify cannot write a bigint, and building the page as objects or as
// millions of small strings first cost more in allocation and garbage collection than the writing.

/** The release of bytes that hold no slot. */
function holdsNothing(): void {
  // nothing to release
}

export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** A response body already serialised; `release` hands its buffer back once the response is sent. */
export class RawJson {
  constructor(
    readonly bytes: Buffer,
    readonly release: () => void = holdsNothing,
  ) {}
}

/**
 * Page buffers kept for reuse. A large page is ~11 MB: allocating that afresh for every page counts
 * as external memory and set off a full garbage collection every few pages (up to ~200 ms).
 */
export class BufferPool {
  private readonly free: Buffer[] = [];

  constructor(private readonly keep = 4) {}

  acquire(min: number): Buffer {
    let best = -1;
    for (let i = 0; i < this.free.length; i++)
      if (
        (this.free[i] as Buffer).length >= min &&
        (best < 0 || (this.free[i] as Buffer).length < (this.free[best] as Buffer).length)
      )
        best = i;
    if (best >= 0) return this.free.splice(best, 1)[0] as Buffer;
    return Buffer.allocUnsafeSlow(min);
  }

  release(b: Buffer): void {
    if (this.free.length < this.keep) this.free.push(b);
    else {
      // Keep the largest buffers: they serve any page.
      let smallest = 0;
      for (let i = 1; i < this.free.length; i++)
        if ((this.free[i] as Buffer).length < (this.free[smallest] as Buffer).length) smallest = i;
      if ((this.free[smallest] as Buffer).length < b.length) this.free[smallest] = b;
    }
  }
}

export function serialise(body: unknown): Buffer {
  return body instanceof RawJson ? body.bytes : Buffer.from(JSON.stringify(body), 'utf8');
}

const DIGITS = new Uint8Array(20);

/** Appends ASCII text and integers to a growing buffer. Callers pass ASCII only (ids, names, digits). */
export class ByteWriter {
  private buf: Buffer;
  private pos = 0;
  private readonly cache = new Map<string, Uint8Array>();

  constructor(
    capacity = 1 << 16,
    private readonly pool?: BufferPool,
  ) {
    this.buf = pool ? pool.acquire(capacity) : Buffer.allocUnsafe(capacity);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const size = Math.max(Math.ceil(this.buf.length * 1.5), this.pos + n);
    const next = this.pool ? this.pool.acquire(size) : Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.pool?.release(this.buf);
    this.buf = next;
  }

  /** Text that recurs within a response (keys, names, times): encoded once, then copied. */
  text(s: string): void {
    let b = this.cache.get(s);
    if (b === undefined) this.cache.set(s, (b = Buffer.from(s, 'latin1')));
    const n = b.length;
    this.ensure(n);
    const buf = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) buf[p++] = b[i] as number;
    this.pos = p;
  }

  /** A JSON string literal of an ASCII value that needs no escaping (generated ids). */
  quoted(s: string): void {
    this.ensure(s.length + 2);
    const buf = this.buf;
    let p = this.pos;
    buf[p++] = 34;
    for (let i = 0; i < s.length; i++) buf[p++] = s.charCodeAt(i);
    buf[p++] = 34;
    this.pos = p;
  }

  /** A non-negative integer, exactly (a safe number or any bigint). */
  int(v: number | bigint): void {
    if (typeof v === 'bigint') {
      const s = v.toString();
      this.ensure(s.length);
      for (let i = 0; i < s.length; i++) this.buf[this.pos++] = s.charCodeAt(i);
      return;
    }
    this.ensure(20);
    if (v === 0) {
      this.buf[this.pos++] = 48;
      return;
    }
    let n = 0;
    while (v > 0) {
      const q = Math.floor(v / 10);
      DIGITS[n++] = 48 + (v - q * 10);
      v = q;
    }
    while (n > 0) this.buf[this.pos++] = DIGITS[--n] as number;
  }

  /** The body written, with a release that returns the buffer to the pool (call once it is sent). */
  finish(): RawJson {
    const buf = this.buf;
    const pool = this.pool;
    let released = false;
    return new RawJson(buf.subarray(0, this.pos), () => {
      if (!released && pool) pool.release(buf);
      released = true;
    });
  }
}

/** Memoised isoSeconds for one response (bucket bounds repeat across every entity of a page). */
export function isoCache(): (ms: number) => string {
  const times = new Map<number, string>();
  return (ms) => {
    let s = times.get(ms);
    if (s === undefined) times.set(ms, (s = isoSeconds(ms)));
    return s;
  };
}
