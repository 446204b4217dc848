// A report run's intermediate Parquet stages live in a hidden folder of the output folder
// (.report.stage-<pid>-<hex>): the next run removes one a killed run left, never one of a live run.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { cleanReportLeftovers, freshStageDir } from '../../src/report/files.js';

test("a stage folder of a dead run is removed, a live run's is kept", async () => {
  const out = mkdtempSync(join(tmpdir(), 'stage-folder-'));
  // A process that has exited: its pid is no longer alive.
  const dead = spawnSync(process.execPath, ['-e', '0']).pid;
  const left = join(out, `.report.stage-${dead}-0badc0de`);
  mkdirSync(left);
  writeFileSync(join(left, 'rpt_daily-00000.parquet'), 'x');
  const live = await freshStageDir(out);
  expect(live.startsWith(join(out, `.report.stage-${process.pid}-`))).toBe(true);
  const cleaned = await cleanReportLeftovers(out);
  expect(cleaned).toEqual([left]);
  expect(existsSync(left)).toBe(false);
  expect(existsSync(live)).toBe(true);
});
