// An organization not eligible for any source (403 on both API versions, a Free-only organization): a
// known, final answer. Its month is complete with no billable usage: the report exits 0, passes
// --require-complete, and the About sheet says so. One with a failed scope beside it stays partial.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, test } from 'vitest';
import { reportCommand } from '../../src/cli/report.js';
import { silentLogger } from '../../src/log.js';
import { ReportIncompleteError } from '../../src/report/run.js';
import { openStore } from '../../src/store/store.js';
import type { CoverageRow } from '../../src/store/types.js';

type CoverageStatus = CoverageRow['status'];

const MONTH = '2026-10';
const NOW = Date.parse('2026-11-05T00:00:00Z');
const ORG = 'org-free-only';

/** A database whose only coverage for the month is `rows` (source, status), daily, for ORG. */
async function database(rows: [string, CoverageStatus][]): Promise<{ db: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'usage-not-eligible-'));
  const db = join(dir, 'usage.duckdb');
  const store = await openStore({ path: db });
  try {
    for (const [source, status] of rows) {
      await store.coverage.record({
        source,
        granularity: 'daily',
        scope: ORG,
        windowStart: new Date('2026-10-01T00:00:00Z'),
        windowEnd: new Date('2026-11-01T00:00:00Z'),
        status,
        rows: 0,
        runId: 'run-1',
        collectedAt: new Date(NOW),
        detail: status === 'not_eligible' ? '403 forbidden: not available on the free plan (request id r-1)' : null,
      });
    }
  } finally {
    await store.close();
  }
  return { db, dir };
}

const report = (db: string, dir: string) =>
  reportCommand({
    db,
    out: join(dir, 'reports'),
    month: MONTH,
    format: 'parquet,xlsx,focus',
    requireComplete: true,
    now: () => NOW,
    env: {},
    log: silentLogger,
  });

describe('an organization not eligible for any source', () => {
  test('is complete for the month with no billable usage: exit 0, --require-complete passes, the About sheet says so', async () => {
    const { db, dir } = await database([
      ['v1_programs', 'not_eligible'],
      ['v2_programs', 'not_eligible'],
      ['v2_frameworks', 'not_eligible'],
    ]);
    const r = await report(db, dir);
    expect(r.exitCode).toBe(0);
    expect(r.partial).toBe(false);
    expect(r.total).toBe('0.00');
    expect(r.coverage).toMatchObject({
      complete: true,
      notEligible: [ORG],
      reason: expect.stringMatching(/every scope is not eligible/),
    });
    expect(r.focus!.rows).toBe(0);

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(r.files.find((f) => f.path.endsWith('.xlsx'))!.path);
    const about: string[] = [];
    wb.getWorksheet('About')!.eachRow((row) =>
      about.push(`${String(row.getCell(1).value)}: ${String(row.getCell(2).value)}`),
    );
    expect(about).toContain(
      `Not eligible: ${ORG}: every scope is not eligible (403 on both API versions), a final answer: complete for the period, with no billable usage`,
    );
    expect(about).toContain('Coverage: COMPLETE');
  });

  test('with a failed scope beside it, the month stays partial and --require-complete refuses it', async () => {
    const { db, dir } = await database([
      ['v1_programs', 'not_eligible'],
      ['v2_programs', 'failed'],
    ]);
    await expect(report(db, dir)).rejects.toBeInstanceOf(ReportIncompleteError);
  });
});
