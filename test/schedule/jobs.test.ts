import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dueExport, manifestPath } from '../../src/schedule/jobs.js';

const out = mkdtempSync(join(tmpdir(), 'usage-jobs-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const at = (iso: string) => Date.parse(iso);

describe('export calendar', () => {
  it('the export month and its day follow the schedule time zone', () => {
    const base = { exportDay: 2, outDir: out };
    // 02:00 UTC on the 2nd of March is still the 1st in New York: not due there yet, due in UTC.
    expect(dueExport({ ...base, timeZone: 'UTC', now: at('2025-03-02T02:00:00Z') })).toBe('2025-02');
    expect(dueExport({ ...base, timeZone: 'America/New_York', now: at('2025-03-02T02:00:00Z') })).toBeNull();
    // 23:30 UTC on the 1st of January is the 2nd in Berlin: December is due there, not yet in UTC.
    expect(dueExport({ ...base, timeZone: 'Europe/Berlin', now: at('2025-01-01T23:30:00Z') })).toBe('2024-12');
    expect(dueExport({ ...base, timeZone: 'UTC', now: at('2025-01-01T23:30:00Z') })).toBeNull();
    // At 00:05 in Berlin on the 2nd, the slot at 06:00 is still to come today (tomorrow, by the UTC date).
    expect(
      dueExport({
        ...base,
        timeZone: 'Europe/Berlin',
        now: at('2025-01-01T23:05:00Z'),
        nextSlot: at('2025-01-02T05:00:00Z'),
      }),
    ).toBeNull();
  });

  it('the export is due from its day on while its manifest is missing, unless its own slot is still to come today', () => {
    const base = { timeZone: 'UTC', exportDay: 2, outDir: out };
    expect(dueExport({ ...base, now: at('2025-03-01T23:00:00Z') })).toBeNull();
    expect(dueExport({ ...base, now: at('2025-03-02T01:00:00Z') })).toBe('2025-02');
    expect(dueExport({ ...base, now: at('2025-03-20T01:00:00Z') })).toBe('2025-02');
    // Its slot at 06:00 today will do it; once past, the next slot is next month and the catch-up applies.
    expect(dueExport({ ...base, now: at('2025-03-02T01:00:00Z'), nextSlot: at('2025-03-02T06:00:00Z') })).toBeNull();
    expect(dueExport({ ...base, now: at('2025-03-02T07:00:00Z'), nextSlot: at('2025-04-02T06:00:00Z') })).toBe(
      '2025-02',
    );
    const manifest = manifestPath(out, '2025-02');
    mkdirSync(dirname(manifest), { recursive: true });
    writeFileSync(manifest, '{}');
    expect(dueExport({ ...base, now: at('2025-03-20T01:00:00Z') })).toBeNull();
  });
});
