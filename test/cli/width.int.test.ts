// Human output fits its terminal: 80 columns off a terminal (every command's --help, the summaries),
// the terminal's own width on one (status shows its details whole on a wide terminal).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { formatStatus, outputWidth, wrap } from '../../src/cli/format.js';
import type { StatusResult } from '../../src/cli/status.js';
import { distModule } from '../support/child.js';

const help = (cmd: string): string =>
  execFileSync(process.execPath, [distModule('src/cli/main.ts'), ...(cmd ? [cmd] : []), '--help'], {
    encoding: 'utf8',
  });

/** The commands the top-level help lists (two-space indent, a name, then its arguments). */
function commands(): string[] {
  const listed = help('').split('Commands:\n')[1] ?? '';
  return [...listed.matchAll(/^ {2}([a-z]+) /gm)].map((m) => m[1] as string).filter((c) => c !== 'help');
}

describe('output width', () => {
  it("keeps every line of every command's --help within 80 columns", () => {
    const listed = commands();
    expect(listed).toEqual(
      expect.arrayContaining(['collect', 'report', 'export', 'status', 'query', 'schedule', 'sandbox', 'demo']),
    );
    for (const cmd of ['', ...listed]) {
      const out = help(cmd);
      expect(
        out.split('\n').filter((l) => l.length > 80),
        `usage-pipeline ${cmd} --help`,
      ).toEqual([]);
    }
  });

  it("takes a terminal's width, and 80 columns off one", () => {
    expect(outputWidth({ isTTY: true, columns: 140 })).toBe(140);
    expect(outputWidth({ isTTY: false, columns: 140 })).toBe(80);
    expect(outputWidth({})).toBe(80);
  });

  it('on a pseudo-terminal of 140 columns, commander and the commands see 140', () => {
    // script(1) gives the child a terminal; stty sets its width as a wide window would.
    const out = execFileSync(
      'script',
      [
        '-qec',
        `stty cols 140 rows 40; ${process.execPath} -e "process.stdout.write(String(process.stdout.columns))"`,
        '/dev/null',
      ],
      { encoding: 'utf8' },
    );
    expect(out.trim()).toMatch(/140$/);
  });

  const status: StatusResult = {
    db: '/var/lib/usage-pipeline/usage.duckdb',
    readFrom: '/var/lib/usage-pipeline/usage.duckdb',
    schemaVersion: 11,
    coverage: [
      {
        source: 'v2_frameworks',
        granularity: 'daily',
        scope: 'org-hidden-prairie-d8e2bbd4',
        firstCompleteStart: null,
        lastCompleteEnd: null,
        lastDataEnd: null,
        completeWindows: 0,
        lastCollectedAt: new Date('2026-11-26T10:00:00Z'),
        lastCompleteCollectedAt: null,
        lastStatus: 'failed',
        lastDetail: 'HTTP 500 at /organizations/org-hidden-prairie-d8e2bbd4/consumption (request req-1234)',
        lastRunId: 'r1',
      },
    ],
    runs: [],
    rows: { usage_program: 1, usage_framework: 2, programs: 3, frameworks: 4, snapshots: 5 },
    check: { ok: false, reason: 'FAIL: 1 scope(s) stale', problems: [] },
  };

  it('shows status whole on a wide terminal and cut to 80 columns off one', () => {
    const now = Date.parse('2026-11-26T11:00:00Z');
    const wide = formatStatus(status, now, 200);
    expect(wide).toContain(
      'failed: HTTP 500 at /organizations/org-hidden-prairie-d8e2bbd4/consumption (request req-1234)',
    );
    expect(wide).toMatch(/collected/);
    expect(wide).not.toContain('cut to fit');
    const narrow = formatStatus(status, now);
    expect(Math.max(...narrow.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    expect(narrow).toContain('cut to fit');
  });

  it('wraps long summary lines at spaces under their indent', () => {
    const text = wrap(`  UNPRICED: ${'word '.repeat(30).trim()}`, 40);
    for (const l of text.split('\n')) expect(l.length).toBeLessThanOrEqual(40);
    expect(text.split('\n')[1]).toMatch(/^ {4}word/);
    expect(wrap('  /a/very/long/path/that/cannot/break/at/any/space/in/it', 20)).toBe(
      '  /a/very/long/path/that/cannot/break/at/any/space/in/it',
    );
  });
});
