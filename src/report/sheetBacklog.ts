// exceljs's streaming writer has no backpressure: a committed row's XML is handed to the zip at once
// (its sheet stream writes 64 KB chunks into the zip entry without waiting), so rows written in a loop
// that does not yield to zlib wait in memory, uncompressed, until the zip catches up (20,000 rows of
// 20 columns: 16.6 MB), and a sheet whose zip entry has not started yet (the sheet before it still
// compressing) keeps all of its XML. The workbook writer waits here every few hundred rows until the
// zip has taken what was written (ARCHITECTURE.md, "Reports", "Memory").
import { once } from 'node:events';
import type ExcelJS from 'exceljs';

/** The parts of exceljs 4's sheet stream (utils/stream-buf.js) and of the zip entry it pipes into that tell how much is waiting. */
interface SheetStreamInternals {
  _stream?: {
    /** Chunks not yet handed to a pipe (every chunk while the sheet's zip entry has not started). */
    buffers?: { length?: number; size?: number }[];
    /** The zip entry's input (a stream.PassThrough of archiver): its writable state's length is what zlib has not read yet. */
    pipes?: (NodeJS.EventEmitter & { _writableState?: { length?: number } })[];
    write?: (chunk: string) => unknown;
  };
}

/**
 * Bytes of a sheet's XML not yet read by the zip: in the sheet stream's own buffers plus in the zip
 * entry's input. null when the stream does not have the shape of exceljs 4 (a test pins it).
 */
export function sheetBacklog(ws: ExcelJS.Worksheet): number | null {
  const s = (ws as unknown as SheetStreamInternals)._stream;
  if (s === undefined) return 0;
  if (!Array.isArray(s.buffers) || !Array.isArray(s.pipes)) return null;
  let bytes = s.buffers.reduce((a, b) => a + (b.length ?? b.size ?? 0), 0);
  for (const p of s.pipes) {
    const n = p._writableState?.length;
    if (typeof n !== 'number') return null;
    bytes += n;
  }
  return bytes;
}

/** Most bytes of XML a sheet may have waiting for the zip before its writer waits. */
export const SHEET_BACKLOG_LIMIT = 1 << 20;
/** How long to wait before looking again while the sheet's zip entry has not started. */
const ENTRY_POLL_MS = 5;

/** Waits until at most `limit` bytes of the sheet's XML wait for the zip (sheetBacklog). */
export async function sheetCaughtUp(ws: ExcelJS.Worksheet, limit = SHEET_BACKLOG_LIMIT): Promise<void> {
  for (let n = sheetBacklog(ws); n !== null && n > limit; n = sheetBacklog(ws)) {
    const s = (ws as unknown as SheetStreamInternals)._stream!;
    const pipe = s.pipes![0];
    if (pipe && s.buffers!.length > 1) {
      // Chunks written before the entry started go to its pipe only on the stream's next write: an
      // empty one hands them over (it adds no byte to the sheet).
      s.write!('');
      continue;
    }
    // Over the pipe's high-water mark, the entry's input emits 'drain' once zlib has read it all;
    // until the entry starts (the sheet before it still compressing) there is no pipe to wait on.
    if (pipe && (pipe._writableState?.length ?? 0) > limit) await once(pipe, 'drain');
    else await new Promise((r) => setTimeout(r, ENTRY_POLL_MS));
  }
}
