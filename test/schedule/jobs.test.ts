import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dueExport, localDate, manifestPath, previousMonth } from '../../src/schedule/jobs.js';

const out = mkdtempSync(join(tmpdir(), 'usage-jobs-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));
const at = (iso: string) => Date.parse(iso);

describe('export calendar', () => {
  it('the previous month follows the schedule time zone', () => {
    expect(previousMonth(at('2025-03-05T10:00:00Z'), 'UTC')).toBe('2025-02');
    expect(previousMonth(at('2025-01-02T00:00:00Z'), 'UTC')).toBe('2024-12');
    // 02:00 UTC on the 1st of March is still the 28th of February in New York.
    expect(localDate(at('2025-03-01T02:00:00Z'), 'America/New_York')).toEqual({ year: 2025, month: 2, day: 28 });
    expect(previousMonth(at('2025-03-01T02:00:00Z'), 'America/New_York')).toBe('2025-01');
  });

  it('the export is due from its day on while its manifest is missing, unless its own slot is still to come today', () => {
    const base = { timeZone: 'UTC', exportDay: 2, outDir: out };
    expect(dueExport({ ...base, now: at('2025-03-01T23:00:00Z') })).toBeNull();
    expect(dueExport({ ...base, now: at('2025-03-02T01:00:00Z') })).toBe('2025-02');
    expect(dueExport({ ...base, now: at('2025-03-20T01:00:00Z') })).toBe('2025-02');
    // Its slot at 06:00 today will do it; once past, the next slot is next month and the catch-up applies.
    expect(dueExport({ ...base, now: at('2025-03-02T01:00:00Z'), nextSlot: at('2025-03-02T06:00:00Z') })).toBeNull();
    expect(dueExport({ ...base, now: at('2025-03-02T07:00:00Z'), nextSlot: at('2025-04-02T06:00:00Z') })).toBe('2025-02');
    const manifest = manifestPath(out, '2025-02');
    mkdirSync(dirname(manifest), { recursive: true });
    writeFileSync(manifest, '{}');
    expect(dueExport({ ...base, now: at('2025-03-20T01:00:00Z') })).toBeNull();
  });
});
