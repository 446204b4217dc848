// The worker side of pageReader.ts: reads consumption pages (readPage.ts) off the collector's main thread
// and hands back their rows, their typed arrays moved rather than copied.
import { parentPort } from 'node:worker_threads';
import { PageShapeError, readPage } from './readPage.js';
import type { ReadAnswer, ReadRequest } from './pageReader.js';

const port = parentPort;
if (!port) throw new Error('readPageWorker.js runs as a worker thread (page/pageReader.ts starts it)');

port.on('message', (m: ReadRequest) => {
  let answer: ReadAnswer;
  try {
    const rows = readPage(m.source, Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength));
    answer = { id: m.id, rows };
    // Each typed array has a buffer of its own, made for this page (PageRows): moved, not copied.
    const moved = [rows.rowItem, rows.rowPeriod, rows.rowStart, rows.rowEnd, rows.rowMetrics].map(
      (a) => a.buffer as ArrayBuffer,
    );
    port.postMessage(answer, moved);
    return;
  } catch (err) {
    answer =
      err instanceof PageShapeError
        ? { id: m.id, offence: err.offence }
        : { id: m.id, failure: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
  port.postMessage(answer);
});
