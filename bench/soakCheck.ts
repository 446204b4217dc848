// The soak's end-of-run checks: the database against the sandbox's truth, value for value, and each
// due month's export present exactly once. Exported so that the soak's test can show both can fail.
// A soak's clock runs for years, so the truth (millions of values) is written to a file and compared with
// the database by DuckDB, not held in memory.
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from '../src/config/packageRoot.js';
import { V1_METRICS } from '../src/contract/api.js';
import { previousMonth } from '../src/domain/calendar.js';
import { nextBucket, type Granularity, type Source } from '../src/domain/granularity.js';
import { expectedRows } from '../src/sandbox/truth.js';
import type { World } from '../src/sandbox/world.js';
import { rawSql } from '../src/store/rawSql.js';
import { openStore } from '../src/store/store.js';

// Each window a run replaced, oldest run first (a later run's window replaces what an earlier one wrote).
const COVERAGE_SQL = `
SELECT run_id, source, granularity, scope, epoch_ms(window_start) AS ws, epoch_ms(window_end) AS we, status
FROM coverage ORDER BY collected_at, run_id`;
const TRUTH_DIFF_SQL = join(packageRoot(), 'bench', 'soak_truth_diff.sql');
/** DuckDB's limit for the comparison: at the store's default 512MB, a 1,000-run soak's 6.7 M values
 *  (the truth's latest-window choice and the join) ran out of memory (2026-11-28). */
const CHECK_MEMORY = '4GB';
/** Lines of the truth file buffered before each write. */
const WRITE_BATCH = 10_000;

interface CoverageRow {
  run_id: string;
  source: Source;
  granularity: Granularity;
  scope: string;
  ws: bigint | number;
  we: bigint | number;
  status: string;
}

export interface TruthCheck {
  equal: boolean;
  /** Values compared (the expected ones). */
  compared: number;
  mismatches: number;
  /** The first few differences, for the report. */
  examples: string[];
}

/** The clock a run saw: its id starts with its start time, e.g. 20250601T120000Z-1a2b3c4d. */
export function runClock(runId: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-/.exec(runId);
  if (!m) throw new Error(`run id ${runId} does not start with its time`);
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

/** Per source, granularity and organisation: each bucket start -> the last window (index) that replaced it. */
function lastWriters(coverage: readonly CoverageRow[]): Map<string, Map<number, number>> {
  const owners = new Map<string, Map<number, number>>();
  coverage.forEach((c, i) => {
    const scopeKey = `${c.source}|${c.granularity}|${c.scope}`;
    const byTs = owners.get(scopeKey) ?? new Map<number, number>();
    owners.set(scopeKey, byTs);
    for (let ts = Number(c.ws); ts < Number(c.we); ts = nextBucket(ts, c.granularity)) byTs.set(ts, i);
  });
  return owners;
}

/**
 * Writes what the database should hold to `path`: the windows runs replaced, replayed in order, each filled
 * with what the sandbox served for it at that run's clock (values settle for a few hours, and an hour the
 * API no longer serves keeps the value it was last collected at). A bucket's rows come from the last window
 * that replaced it; a row off the buckets' grid is kept from every window, and the latest counts
 * (soak_truth_diff.sql). Zeros are left out: a zero and no row say the same (v2 omits zeros, v1 sends them).
 */
export function writeTruth(world: World, coverage: readonly CoverageRow[], path: string): void {
  const owners = lastWriters(coverage);
  const fd = openSync(path, 'w');
  let lines: string[] = [];
  const flush = () => {
    if (lines.length > 0) writeSync(fd, lines.join(''));
    lines = [];
  };
  try {
    coverage.forEach((c, i) => {
      const byTs = owners.get(`${c.source}|${c.granularity}|${c.scope}`);
      const rows = expectedRows(world, {
        source: c.source,
        granularity: c.granularity,
        from: Number(c.ws),
        to: Number(c.we),
        now: runClock(c.run_id),
        orgId: c.scope,
        ...(c.source === 'v1_programs' ? { metrics: V1_METRICS } : {}),
      });
      for (const r of rows) {
        const owner = byTs?.get(r.timeframe_start);
        if (r.value === 0n || (owner !== undefined && owner !== i)) continue;
        const key = [c.source, c.granularity, r.org_id, r.program_id, r.framework_id ?? '', r.period_id];
        lines.push(`${i}\t${key.join('\t')}\t${r.timeframe_start}\t${r.metric}\t${r.value}\n`);
        if (lines.length >= WRITE_BATCH) flush();
      }
    });
    flush();
  } finally {
    closeSync(fd);
  }
}

/** Reads the database (read-only) and compares it with the world's truth at each writing run's clock. */
export async function checkDatabase(dbPath: string, world: World): Promise<TruthCheck> {
  const dir = mkdtempSync(join(tmpdir(), 'usage-soak-truth-'));
  const store = await openStore({ path: dbPath, readOnly: true, lockTimeoutMs: 30_000, memoryLimit: CHECK_MEMORY });
  try {
    const sql = rawSql(store);
    const truth = join(dir, 'truth.tsv');
    writeTruth(world, await sql.query<CoverageRow>(COVERAGE_SQL), truth);
    const [r] = await sql.query<{ compared: bigint; mismatches: bigint; examples: string[] | null }>(
      readFileSync(TRUTH_DIFF_SQL, 'utf8'),
      { path: truth },
    );
    const mismatches = Number(r?.mismatches ?? 0);
    return { equal: mismatches === 0, compared: Number(r?.compared ?? 0), mismatches, examples: r?.examples ?? [] };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface ExportCheck {
  once: boolean;
  expectedMonths: string[];
  problems: string[];
  /** Hidden sets a killed export left behind (the next export run removes them); not visible exports. */
  leftovers: number;
}

/** The month `n` months after `month` (YYYY-MM). */
function addMonths(month: string, n: number): string {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const i = y * 12 + (m - 1) + n;
  return `${Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, '0')}`;
}

/** Every month from previousMonth(first) to the last one due at `last` (from `exportDay` of the month after). */
export function dueMonths(first: number, last: number, exportDay: number): string[] {
  const end = new Date(last).getUTCDate() >= exportDay ? previousMonth(last) : addMonths(previousMonth(last), -1);
  const months: string[] = [];
  for (let m = previousMonth(first); m <= end; m = addMonths(m, 1)) months.push(m);
  return months;
}

const HIDDEN_SET = /^\.(\d{4}-\d{2})\.(set|new|link|old|stage)-/;

/**
 * Each due month is one visible entry (the month's link to its live set) holding manifest.json; no other
 * visible entry names a month, except `optional` (the previous month, which the monthly slot may export
 * before it is due). Hidden sets a killed export left (the next export removes them) are counted, not failed.
 */
export function checkExports(outDir: string, months: readonly string[], optional: readonly string[] = []): ExportCheck {
  const names = existsSync(outDir) ? readdirSync(outDir) : [];
  const problems: string[] = [];
  for (const m of months) {
    const visible = names.filter((n) => n.startsWith(m));
    if (visible.length !== 1) problems.push(`${m}: ${visible.length} visible entries (${visible.join(', ')})`);
    else if (!existsSync(join(outDir, m, 'manifest.json'))) problems.push(`${m}: no manifest.json`);
  }
  const live = new Set<string>();
  for (const n of names) {
    if (n.startsWith('.')) continue;
    if (!months.includes(n) && !optional.includes(n)) problems.push(`${n}: an export nobody was due`);
    if (lstatSync(join(outDir, n)).isSymbolicLink()) live.add(readlinkSync(join(outDir, n)));
  }
  const leftovers = names.filter((n) => HIDDEN_SET.test(n) && !live.has(n)).length;
  return { once: problems.length === 0, expectedMonths: [...months], problems, leftovers };
}
