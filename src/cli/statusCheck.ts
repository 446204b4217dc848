// `status --check`, for monitors: is every configured scope fresh, and did the last run succeed?
// Pure: it judges a StatusResult against the config's max ages; the CLI turns it into an exit code.
import type { Config } from '../config/schema.js';
import type { CoverageSummaryRow, RunRow } from '../store/types.js';

export interface StatusCheck {
  ok: boolean;
  /** One line: why it failed, or what is fine. */
  reason: string;
  /** Every problem found, one line each (the reason names the first). */
  problems: string[];
}

const hours = (ms: number) => `${(ms / 3_600_000).toFixed(ms < 36_000_000 ? 1 : 0)}h`;

/**
 * `runInProgress(run)`: whether a run still marked running is really going (its process holds the lock);
 * one that is not was interrupted (killed, or the machine went down).
 */
export function checkStatus(
  s: { coverage: CoverageSummaryRow[]; runs: RunRow[] },
  config: Pick<Config, 'collect' | 'status'>,
  now: number,
  runInProgress: (run: RunRow) => boolean,
): StatusCheck {
  const problems: string[] = [];
  const sources = new Set<string>(config.collect.sources);
  const grans = new Set<string>(config.collect.granularities);
  const maxAge = config.status.max_age_hours as Record<string, number>;
  // An organization that the other API version serves answers 403 here: not a scope to keep fresh.
  const scopes = s.coverage.filter(
    (c) => sources.has(c.source) && grans.has(c.granularity) && c.lastStatus !== 'not_eligible',
  );
  if (s.coverage.length === 0) problems.push('nothing collected yet: run `usage-pipeline collect`');
  for (const c of scopes) {
    const limit = (maxAge[c.granularity] ?? 24) * 3_600_000;
    const last = c.lastCompleteCollectedAt?.getTime();
    const what = `${c.source} ${c.granularity} ${c.scope}`;
    if (last === undefined)
      problems.push(
        `${what}: never completely collected (last ${c.lastStatus}${c.lastDetail ? `: ${c.lastDetail}` : ''})`,
      );
    else if (now - last > limit)
      problems.push(`${what}: stale, last complete collection ${hours(now - last)} ago (max ${hours(limit)})`);
  }
  const finished = s.runs.filter((r) => !(r.status === 'running' && runInProgress(r)));
  const last = finished[0];
  if (last?.status === 'failed')
    problems.push(`last run ${last.runId} (${last.command}) failed${last.error ? `: ${last.error}` : ''}`);
  else if (last?.status === 'running')
    problems.push(
      `last run ${last.runId} (${last.command}) was interrupted: still marked running, but no process holds the lock`,
    );
  else if (last?.status === 'interrupted')
    problems.push(`last run ${last.runId} (${last.command}) was interrupted${last.error ? `: ${last.error}` : ''}`);
  // The run problem first: it is usually the cause of the staleness.
  problems.sort((a, b) => Number(b.startsWith('last run')) - Number(a.startsWith('last run')));
  if (problems.length === 0) {
    return {
      ok: true,
      reason: `OK: ${scopes.length} scope(s) fresh; last run ${last ? `${last.status} (${last.runId})` : 'none'}`,
      problems,
    };
  }
  const more = problems.length > 1 ? ` (+${problems.length - 1} more: status --json)` : '';
  const first = problems[0]!.replace(/\s+/g, ' ');
  return { ok: false, reason: `FAIL: ${first.length > 160 ? first.slice(0, 159) + '…' : first}${more}`, problems };
}
