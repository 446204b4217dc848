// Replay: the sandbox keeps the bytes of each /v1 answer it renders and serves them again when the same
// request comes back, so a benchmark's API side costs next to no CPU once its pages are rendered. Only
// the rendering is skipped: the key, the rate limits, latency and faults still apply to every request
// (server.ts checks them first), and an error answer is kept as its error, so its body still carries
// the request's own id.
//
// An answer depends on the world (fixed for the server's life), the key's reach, the request and the
// clock. The cache is keyed on the key's token and the canonical request, and holds the answers of one
// clock reading only: any other reading empties it. A replay is therefore useful with a clock that
// stands still (set only through POST /__sandbox/clock); with a moving clock it renders every time.
// It holds DEFAULT_REPLAY_MAX_BYTES at most: a benchmark empties it (POST /__sandbox/replay/clear) before
// rendering the next phase's pages, or those pages find it full of the last phase's and are rendered again.

import { RawJson, serialise } from './json.js';
import { ApiError } from './route.js';
import type { SandboxStats } from './stats.js';

/** Stored answer bytes above which new answers are rendered and served but no longer stored: room for the
 *  `large` account's hourly 48-hour phase (1.6 GB of pages: at 1 GiB, 64 of its 197 were rendered again). */
export const DEFAULT_REPLAY_MAX_BYTES = 4 * 2 ** 30;

/**
 * The canonical request: method, path as sent, and the query with its parameters sorted by name. The
 * sort is stable, so repeated parameters keep their order (which the answer may depend on, e.g. the
 * order of metrics); encoding differences that decode to the same values give the same key.
 */
export function replayKey(token: string, method: string, url: URL): string {
  const query = new URLSearchParams(url.searchParams);
  query.sort();
  return `${token} ${method} ${url.pathname}?${query.toString()}`;
}

export class ReplayCache {
  private readonly answers = new Map<string, Buffer | ApiError>();
  private clockAt: number | undefined;
  private storedBytes = 0;

  constructor(private readonly maxBytes = DEFAULT_REPLAY_MAX_BYTES) {}

  /** Forgets every stored answer (POST /__sandbox/replay/clear): the next phase's pages get the room. */
  clear(): number {
    const n = this.answers.size;
    this.answers.clear();
    this.storedBytes = 0;
    return n;
  }

  /**
   * The answer to the request `key` at clock `now`: the stored one, else `render()`'s (stored for next
   * time). An ApiError thrown by `render` is stored and thrown again; any other error is not stored.
   */
  answer(key: string, now: number, stats: SandboxStats, render: () => unknown): unknown {
    if (now !== this.clockAt) {
      this.clear();
      this.clockAt = now;
    }
    const counters = (stats.replay ??= { hits: 0, misses: 0, storedBytes: 0 });
    counters.storedBytes = this.storedBytes;
    const stored = this.answers.get(key);
    if (stored !== undefined) {
      counters.hits++;
      if (stored instanceof ApiError) throw stored;
      return new RawJson(stored);
    }
    counters.misses++;
    let bytes: Buffer;
    try {
      bytes = copyOut(render());
    } catch (err) {
      if (err instanceof ApiError) this.store(key, err, 0, counters);
      throw err;
    }
    this.store(key, bytes, bytes.length, counters);
    return new RawJson(bytes);
  }

  private store(key: string, answer: Buffer | ApiError, size: number, counters: { storedBytes: number }): void {
    if (this.storedBytes + size <= this.maxBytes) {
      this.answers.set(key, answer);
      this.storedBytes += size;
    }
    counters.storedBytes = this.storedBytes;
  }
}

/** The body's bytes in a buffer of their own: a rendered page's buffer goes back to the pool it came from. */
function copyOut(body: unknown): Buffer {
  if (!(body instanceof RawJson)) return serialise(body);
  const bytes = Buffer.allocUnsafeSlow(body.bytes.length);
  body.bytes.copy(bytes);
  body.release();
  return bytes;
}
