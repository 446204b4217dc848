// Reads consumption pages on a worker thread, so that the collector's main thread (the cursor chains, the
// staging appends, the commits) is not held up by the scan of a large frameworks page: the scan runs on
// the machine's second core. The rows are readPage.ts's, exactly: the same code on the worker, the typed
// arrays moved back, an int64 beyond 2^53 kept as its bigint (structured clone keeps bigints). Where the
// worker's compiled file is not there (the sources run by a test runner), pages are read on this thread.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Source } from '../domain/granularity.js';
import type { Offence } from './firstOffence.js';
import { PageRows } from './pageRows.js';
import { PageShapeError, readPage } from './readPage.js';

export interface ReadRequest {
  id: number;
  source: Source;
  bytes: Uint8Array;
}
export type ReadAnswer =
  { id: number; rows: PageRows } | { id: number; offence: Offence } | { id: number; failure: string };

const WORKER_FILE = fileURLToPath(new URL('./readPageWorker.js', import.meta.url));

interface Waiting {
  resolve(rows: PageRows): void;
  reject(err: Error): void;
}

/** One worker thread reading pages in the order they are given; started at the first page. */
export class PageReader {
  private worker: Worker | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;

  /** `offThread`: false reads every page on this thread (as where the worker's file is missing). */
  constructor(readonly offThread = existsSync(WORKER_FILE)) {}

  /**
   * The page's rows, or PageShapeError naming its first offence, as readPage() gives them. The page's
   * bytes are moved to the worker when the buffer is the page's alone: `page` is not to be read after.
   */
  read(source: Source, page: Buffer): Promise<PageRows> {
    if (!this.offThread) return new Promise((resolve) => resolve(readPage(source, page)));
    const worker = this.start();
    const id = this.nextId++;
    const whole = page.byteOffset === 0 && page.byteLength === page.buffer.byteLength;
    const bytes = new Uint8Array(page.buffer, page.byteOffset, page.byteLength);
    return new Promise<PageRows>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      if (this.waiting.size === 1) worker.ref();
      const request: ReadRequest = { id, source, bytes };
      worker.postMessage(request, whole ? [page.buffer as ArrayBuffer] : []);
    });
  }

  /** Ends the worker; pages still being read are refused. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.fail(new Error('the page reader was closed'));
    await w?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(WORKER_FILE);
    // An idle reader keeps no process alive; one reading a page does (ref() while pages wait).
    w.unref();
    w.on('message', (a: ReadAnswer) => this.answer(a));
    w.on('error', (err) => {
      if (this.worker === w) this.worker = null;
      this.fail(err);
    });
    w.on('exit', (code) => {
      if (this.worker !== w) return;
      this.worker = null;
      this.fail(new Error(`the page reader's worker thread exited with code ${code}`));
    });
    this.worker = w;
    return w;
  }

  private answer(a: ReadAnswer): void {
    const waiting = this.waiting.get(a.id);
    if (!waiting) return;
    this.waiting.delete(a.id);
    if (this.waiting.size === 0) this.worker?.unref();
    if ('rows' in a) waiting.resolve(Object.setPrototypeOf(a.rows, PageRows.prototype) as PageRows);
    else if ('offence' in a) waiting.reject(new PageShapeError(a.offence));
    else waiting.reject(new Error(`reading a page failed on the page reader's worker thread: ${a.failure}`));
  }

  private fail(err: Error): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const w of all) w.reject(err);
  }
}
