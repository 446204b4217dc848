// The workbook writer's wait for the zip: exceljs's streaming writer hands committed rows to the zip
// without backpressure, so the writer reads how much XML is waiting (sheetBacklog, from exceljs's
// stream internals) and waits until the zip has taken it. These tests pin that the backlog is seen
// (an exceljs whose internals changed would read as null and fail here, not silently stop bounding
// the memory), that waiting brings it under the limit on every sheet, also on a sheet whose zip entry
// had not started, and that the workbook read back holds every row in order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, test } from 'vitest';
import { SHEET_BACKLOG_LIMIT, sheetBacklog, sheetCaughtUp } from '../../src/report/sheetBacklog.js';

const dir = mkdtempSync(join(tmpdir(), 'sheet-backlog-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COLUMNS = 12;
const rowOf = (sheet: number, i: number) =>
  Array.from({ length: COLUMNS }, (_, j) => (j % 2 ? `sheet ${sheet} line ${i} column ${j}` : i * 1000 + j));

describe('sheetCaughtUp', () => {
  test('sees the XML waiting for the zip and waits until the zip has taken it, on every sheet', async () => {
    const path = join(dir, 'paced.xlsx');
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
    const sheets = 3;
    const rows = 6_000;
    const seen: number[] = [];
    for (let s = 0; s < sheets; s++) {
      const ws = wb.addWorksheet(`s${s}`);
      ws.columns = Array.from({ length: COLUMNS }, (_, j) => ({ header: `c${j}`, key: `c${j}` }));
      ws.getRow(1).commit();
      // Written without yielding, as the writer's loop would between two waits: all of it waits.
      for (let i = 0; i < rows; i++) ws.addRow(rowOf(s, i)).commit();
      const before = sheetBacklog(ws);
      expect(before).not.toBeNull();
      seen.push(before!);
      await sheetCaughtUp(ws);
      expect(sheetBacklog(ws)).toBeLessThanOrEqual(SHEET_BACKLOG_LIMIT);
      // A second wait with a lower limit: the zip takes the rest too.
      await sheetCaughtUp(ws, 64 * 1024);
      expect(sheetBacklog(ws)).toBeLessThanOrEqual(64 * 1024);
      ws.commit();
    }
    // Each sheet's rows were more than the limit when written (so the wait had something to do).
    for (const b of seen) expect(b).toBeGreaterThan(SHEET_BACKLOG_LIMIT);
    await wb.commit();

    const back = new ExcelJS.Workbook();
    await back.xlsx.readFile(path);
    expect(back.worksheets.map((w) => w.name)).toEqual(['s0', 's1', 's2']);
    for (const [s, ws] of back.worksheets.entries()) {
      expect(ws.rowCount).toBe(rows + 1);
      for (const i of [0, 1, rows / 2, rows - 1]) expect(ws.getRow(i + 2).values).toEqual([undefined, ...rowOf(s, i)]);
    }
  });

  test('a sheet written while the sheet before it is still being compressed waits for its entry to start', async () => {
    const path = join(dir, 'queued.xlsx');
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: true, useSharedStrings: false });
    const first = wb.addWorksheet('first');
    first.getRow(1).values = ['a'];
    first.getRow(1).commit();
    for (let i = 0; i < 4_000; i++) first.addRow(rowOf(0, i)).commit();
    first.commit();
    // The first sheet's rows are still in the zip's input: the second sheet's entry has not started,
    // so its rows stay in its own stream.
    const second = wb.addWorksheet('second');
    second.getRow(1).values = ['b'];
    second.getRow(1).commit();
    for (let i = 0; i < 4_000; i++) second.addRow(rowOf(1, i)).commit();
    expect(sheetBacklog(second)).toBeGreaterThan(SHEET_BACKLOG_LIMIT);
    await sheetCaughtUp(second);
    expect(sheetBacklog(second)).toBeLessThanOrEqual(SHEET_BACKLOG_LIMIT);
    second.commit();
    await wb.commit();

    const back = new ExcelJS.Workbook();
    await back.xlsx.readFile(path);
    const ws = back.getWorksheet('second')!;
    expect(ws.rowCount).toBe(4_001);
    expect(ws.getRow(4_001).values).toEqual([undefined, ...rowOf(1, 3_999)]);
  });
});
