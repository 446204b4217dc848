// `status --check`'s judgement on its own: which scopes count, and a run left "running" by a dead process.
import { describe, expect, it } from 'vitest';
import { checkStatus } from '../../src/cli/statusCheck.js';
import { loadConfig } from '../../src/config/load.js';
import type { CoverageSummaryRow, RunRow } from '../../src/store/types.js';

const NOW = Date.parse('2026-11-21T12:00:00Z');
const config = loadConfig({ cwd: process.cwd(), env: {} }).config;
const hoursAgo = (h: number) => new Date(NOW - h * 3_600_000);

function scope(
  source: string,
  granularity: string,
  collectedHoursAgo: number | null,
  lastStatus: CoverageSummaryRow['lastStatus'] = 'complete',
): CoverageSummaryRow {
  return {
    source,
    granularity,
    scope: 'org-a',
    firstCompleteStart: null,
    lastCompleteEnd: null,
    lastDataEnd: null,
    completeWindows: 1,
    lastCollectedAt: hoursAgo(collectedHoursAgo ?? 0),
    lastCompleteCollectedAt: collectedHoursAgo === null ? null : hoursAgo(collectedHoursAgo),
    lastStatus,
    lastDetail: lastStatus === 'complete' ? null : 'HTTP 403: not eligible',
    lastRunId: 'r1',
  };
}
function run(status: RunRow['status'], runId = 'r1'): RunRow {
  return {
    runId,
    command: 'collect',
    startedAt: hoursAgo(1),
    finishedAt: null,
    status,
    requests: 1,
    retries: 0,
    throttled: 0,
    pages: 1,
    rowsLoaded: 1,
    error: status === 'failed' ? 'HTTP 401' : null,
    options: null,
    inventoryRequests: 0,
  };
}

describe('status --check', () => {
  const fresh = [
    scope('v2_programs', 'hourly', 1),
    scope('v2_programs', 'daily', 20),
    scope('v1_programs', 'daily', 100, 'not_eligible'),
  ];

  it('passes with fresh scopes and a complete last run; an org the other API version serves does not count', () => {
    const c = checkStatus({ coverage: fresh, runs: [run('complete')] }, config, NOW, () => false);
    expect(c).toMatchObject({ ok: true, problems: [] });
    expect(c.reason).toBe('OK: 2 scope(s) fresh; last run complete (r1)');
  });

  it('a run still marked running: in progress if its process holds the lock, else interrupted', () => {
    const runs = [run('running', 'r2'), run('complete', 'r1')];
    expect(checkStatus({ coverage: fresh, runs }, config, NOW, () => true).ok).toBe(true);
    const dead = checkStatus({ coverage: fresh, runs }, config, NOW, () => false);
    expect(dead.ok).toBe(false);
    expect(dead.reason).toBe(
      'FAIL: last run r2 (collect) was interrupted: still marked running, but no process holds the lock',
    );
  });

  it('a scope never completely collected fails, and the reason counts the other problems', () => {
    const c = checkStatus(
      {
        coverage: [...fresh, scope('v2_frameworks', 'hourly', null, 'failed'), scope('v2_programs', 'monthly', 30)],
        runs: [run('complete')],
      },
      config,
      NOW,
      () => false,
    );
    expect(c.ok).toBe(false);
    expect(c.problems).toHaveLength(2);
    expect(c.reason).toMatch(
      /^FAIL: v2_frameworks hourly org-a: never completely collected \(last failed: HTTP 403: not eligible\) \(\+1 more: status --json\)$/,
    );
  });
});
