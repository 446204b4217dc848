// The soak's end-of-run checks: the database against the sandbox's truth, value for value, and each
// due month's export present exactly once. Exported so that the soak's test can show both can fail.
import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { V1_METRICS } from '../src/contract/api.js';
import { previousMonth } from '../src/domain/calendar.js';
import { nextBucket, type Granularity, type Source } from '../src/domain/granularity.js';
import { expectedRows } from '../src/sandbox/truth.js';
import type { World } from '../src/sandbox/world.js';
import { rawSql } from '../src/store/rawSql.js';
import { openStore } from '../src/store/store.js';

// Every stored value with the run that wrote it; the key names one bucket of one entity's period and metric.
const PROGRAM_ROWS_SQL = `
SELECT CASE api_version WHEN 'v1' THEN 'v1_programs' ELSE 'v2_programs' END AS source, granularity,
       org_id, program_id, '' AS framework_id, period_id, epoch_ms(timeframe_start) AS ts, metric, value, run_id
FROM usage_program`;
const FRAMEWORK_ROWS_SQL = `
SELECT 'v2_frameworks' AS source, granularity, org_id, program_id, framework_id, period_id,
       epoch_ms(timeframe_start) AS ts, metric, value, run_id
FROM usage_framework`;
// Each window a run replaced, oldest run first (a later run's window replaces what an earlier one wrote).
const COVERAGE_SQL = `
SELECT run_id, source, granularity, scope, epoch_ms(window_start) AS ws, epoch_ms(window_end) AS we, status
FROM coverage ORDER BY collected_at, run_id`;

interface StoredRow {
  source: string;
  granularity: string;
  org_id: string;
  program_id: string;
  framework_id: string;
  period_id: string;
  ts: bigint | number;
  metric: string;
  value: bigint | number;
  run_id: string;
}

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

const keyOf = (
  source: string,
  g: string,
  org: string,
  program: string,
  fw: string,
  period: string,
  ts: number,
  metric: string,
) => `${source}|${g}|${org}|${program}|${fw}|${period}|${ts}|${metric}`;

/**
 * What the database should hold: the windows runs replaced, replayed in order, each filled with what the
 * sandbox served for it at that run's clock (values settle for a few hours, and an hour the API no longer
 * serves keeps the value it was last collected at). Keys are per source, granularity and organisation.
 */
export function expectedValues(world: World, coverage: readonly CoverageRow[]): Map<string, bigint> {
  const expected = new Map<string, bigint>();
  // Per source, granularity and organisation: bucket start -> the keys of that bucket.
  const buckets = new Map<string, Map<number, string[]>>();
  for (const c of coverage) {
    const from = Number(c.ws);
    const to = Number(c.we);
    const scopeKey = `${c.source}|${c.granularity}|${c.scope}`;
    const byTs = buckets.get(scopeKey) ?? new Map<number, string[]>();
    buckets.set(scopeKey, byTs);
    for (let ts = from; ts < to; ts = nextBucket(ts, c.granularity)) {
      for (const k of byTs.get(ts) ?? []) expected.delete(k);
      byTs.delete(ts);
    }
    const rows = expectedRows(world, {
      source: c.source,
      granularity: c.granularity,
      from,
      to,
      now: runClock(c.run_id),
      orgId: c.scope,
      ...(c.source === 'v1_programs' ? { metrics: V1_METRICS } : {}),
    });
    for (const r of rows) {
      if (r.value === 0n) continue; // a zero and no row say the same (v2 omits zeros, v1 sends them)
      const k = keyOf(
        c.source,
        c.granularity,
        r.org_id,
        r.program_id,
        r.framework_id ?? '',
        r.period_id,
        r.timeframe_start,
        r.metric,
      );
      expected.set(k, r.value);
      const list = byTs.get(r.timeframe_start) ?? [];
      list.push(k);
      byTs.set(r.timeframe_start, list);
    }
  }
  return expected;
}

/** Compares two key -> value maps both ways (neither holds zeros). */
export function compareValues(expected: Map<string, bigint>, stored: Map<string, bigint>): TruthCheck {
  const examples: string[] = [];
  let mismatches = 0;
  const note = (line: string) => {
    mismatches++;
    if (examples.length < 10) examples.push(line);
  };
  for (const [k, v] of expected) {
    const s = stored.get(k);
    if (s === undefined) note(`missing ${k} (truth ${v})`);
    else if (s !== v) note(`differs ${k}: stored ${s}, truth ${v}`);
  }
  for (const [k, v] of stored) if (!expected.has(k)) note(`extra ${k} = ${v}`);
  return { equal: mismatches === 0, compared: expected.size, mismatches, examples };
}

/** Reads the database (read-only) and compares it with the world's truth at each writing run's clock. */
export async function checkDatabase(dbPath: string, world: World): Promise<TruthCheck> {
  const store = await openStore({ path: dbPath, readOnly: true, lockTimeoutMs: 30_000 });
  try {
    const sql = rawSql(store);
    const coverage = await sql.query<CoverageRow>(COVERAGE_SQL);
    const stored = new Map<string, bigint>();
    for (const q of [PROGRAM_ROWS_SQL, FRAMEWORK_ROWS_SQL]) {
      for (const r of await sql.query<StoredRow>(q)) {
        const k = keyOf(
          r.source,
          r.granularity,
          r.org_id,
          r.program_id,
          r.framework_id,
          r.period_id,
          Number(r.ts),
          r.metric,
        );
        if (BigInt(r.value) !== 0n) stored.set(k, BigInt(r.value));
      }
    }
    return compareValues(expectedValues(world, coverage), stored);
  } finally {
    await store.close();
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
