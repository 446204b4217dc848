// The store's side of `export --dataset`: the file units of each stream of the dataset, the windows
// runs replaced since a dataset folder's last export, a unit's fingerprint, and one unit staged into a
// TEMP table and copied to Parquet. The streams are a closed set known at compile time, so every
// statement is a constant chosen by stream: no table name is spliced in at run time. Values
// (granularity, time bounds) are bound as $name parameters; the COPY target, which DuckDB takes only
// as a literal, goes through quoteLiteral.
import { quoteLiteral } from './sql.js';

export const DATASET_STREAMS = [
  'usage_program',
  'usage_framework',
  'spend_daily',
  'programs',
  'frameworks',
  'snapshots',
] as const;
export type DatasetStream = (typeof DATASET_STREAMS)[number];
export type DimensionStream = Extract<DatasetStream, 'programs' | 'frameworks' | 'snapshots'>;
export type UsageStream = Extract<DatasetStream, 'usage_program' | 'usage_framework'>;
export const DIMENSION_STREAMS: readonly DimensionStream[] = ['programs', 'frameworks', 'snapshots'];

/** The file layout the export writes; a folder written in another one is exported in full once. */
export const DATASET_LAYOUT = 'v2-hourly-by-day';

/** One file of a stream: hourly usage by UTC day, daily and monthly usage by UTC month, spend_daily
 *  by billing month, a dimension whole. */
export interface DatasetPartitionKey {
  stream: DatasetStream;
  granularity?: string;
  /** 'YYYY-MM'. */
  month?: string;
  /** 'YYYY-MM-DD', hourly usage only. */
  day?: string;
}

export interface DatasetFingerprint {
  rows: bigint;
  /** Order-independent: count, xor and sum of row hashes over every column. */
  digest: string;
  /** Usage only: the sum of row hashes without run_id and collected_at, which a run that collects the
   *  same values again changes but pricing does not read (export_partitions.pricing_digest). */
  pricing?: string;
}

/** A window whose rows changed since a folder's last export (a run replaced it, or prune emptied it). */
export interface ChangedWindow {
  stream: UsageStream;
  granularity: string;
  start: Date;
  end: Date;
  removal: boolean;
}

/** The TEMP table one unit is staged in, so that its Parquet and Arrow files hold the same rows. */
export const STAGED_PARTITION = 'export_partition';

export const DATASET_UNITS_SQL_FILE = 'src/store/sql/dataset_units.sql';
export const CHANGED_WINDOWS_SQL_FILE = 'src/store/sql/dataset_changed_windows.sql';

// A unit's rows, unordered. Usage rows leave out the partition column (Hive layout: it is in the
// path). Parameters: usage $granularity, $from, $to (TIMESTAMPTZ: the UTC day or month); spend_daily
// $from, $to (the billing month, UTC: spend_daily_in reads that month's usage alone, migration 018);
// dimensions none.
const ROWS_SQL: Record<DatasetStream, string> = {
  usage_program: `SELECT * EXCLUDE (granularity) FROM usage_program
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to`,
  usage_framework: `SELECT * EXCLUDE (granularity) FROM usage_framework
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to`,
  spend_daily: `SELECT * FROM spend_daily_in($from, $to)
WHERE billing_month = CAST($from AS DATE)`,
  programs: 'SELECT * FROM programs',
  frameworks: 'SELECT * FROM frameworks',
  snapshots: 'SELECT * FROM snapshots',
};

// The order a unit's file is written in (key order). It is given where the file is written
// (copyPartitionSql): the store runs without preserve_insertion_order, so a staged table's order is not kept.
const ORDER_SQL: Record<DatasetStream, string> = {
  usage_program: 'ORDER BY api_version, program_id, period_id, timeframe_start, metric',
  usage_framework: 'ORDER BY program_id, framework_id, period_id, timeframe_start, metric',
  spend_daily:
    'ORDER BY usage_day, org_id NULLS FIRST, program_id, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id',
  programs: 'ORDER BY ALL',
  frameworks: 'ORDER BY ALL',
  snapshots: 'ORDER BY ALL',
};

const DIGEST = `count(*) AS n_rows,
  CAST(bit_xor(hash(t)) AS VARCHAR) || '-' || CAST(coalesce(sum(CAST(hash(t) AS HUGEINT)), 0) AS VARCHAR) AS digest`;
const PRICING_DIGEST = `, CAST(coalesce(sum(CAST(hash(row(*COLUMNS(* EXCLUDE (run_id, collected_at)))) AS HUGEINT)), 0) AS VARCHAR) AS pricing`;
const isUsage = (stream: DatasetStream) => stream === 'usage_program' || stream === 'usage_framework';

/** The fingerprint of one unit's rows, read where they are stored (parameters those of its rows). */
export function fingerprintSql(stream: DatasetStream): string {
  return `SELECT ${DIGEST}${isUsage(stream) ? PRICING_DIGEST : ''} FROM (${ROWS_SQL[stream]}) t`;
}

/** The fingerprint of the staged unit (the same as fingerprintSql's over the same rows). */
export function stagedFingerprintSql(stream: DatasetStream): string {
  return `SELECT ${DIGEST}${isUsage(stream) ? PRICING_DIGEST : ''} FROM ${STAGED_PARTITION} t`;
}

/** What a spend_daily month is priced from (parameters $dir, $month 'YYYY-MM', $from, $to, $context):
 *  the pricing digests of the month's usage files as recorded (every file a run replaced is looked at
 *  before any spend month), the month's coverage as its granularity choice reads it (complete windows
 *  clipped to the month; other statuses only by presence), and the prices and names. */
export const SPEND_PRICED_FROM_SQL = `SELECT md5(concat_ws('#', $context,
  (SELECT coalesce(string_agg(partition || '=' || coalesce(pricing_digest, fingerprint), ';' ORDER BY partition), '')
   FROM export_partitions WHERE dataset_dir = $dir AND starts_with(partition, 'usage_')
     AND contains(partition, '/month=' || $month || '/')),
  (SELECT CAST(count(*) AS VARCHAR) || '-' || CAST(coalesce(sum(CAST(hash(source, granularity, scope, status, s, e) AS HUGEINT)), 0) AS VARCHAR)
   FROM (SELECT DISTINCT source, granularity, scope, status,
           CASE WHEN status = 'complete' THEN greatest(window_start, $from) END AS s,
           CASE WHEN status = 'complete' THEN least(window_end, $to) END AS e
         FROM coverage WHERE window_start < $to AND window_end > $from)))) AS digest`;

/** The statement staging one unit (parameters those of its rows). */
export function stagePartitionSql(stream: DatasetStream): string {
  return `CREATE OR REPLACE TEMP TABLE ${STAGED_PARTITION} AS\n${ROWS_SQL[stream]}`;
}

/** The granularity a billing month is priced at, as spend_daily_in chooses it (parameters $from, $to:
 *  the month); no row when the month has no coverage (its spend_daily rows are then none). */
export const SPEND_MONTH_GRANULARITY_SQL = `SELECT granularity FROM spend_month_granularity_in($from, $to)
WHERE billing_month = CAST($from AS DATE)`;

/**
 * A spend_daily month is staged in steps, each a TEMP table, at the month's granularity alone (parameters
 * $granularity, $from, $to, $framework_metrics, each step binding those it names): the same rows as
 * `SELECT * FROM spend_daily_in($from, $to)` for the month (ROWS_SQL.spend_daily), which prices every
 * granularity and computes spend_program_days twice for each, in one query whose windows spilled
 * gigabytes. The last step, spend_month_rows.sql, is staged as the unit (spendMonthStageSql).
 */
export const SPEND_MONTH_STEPS: readonly { table: string; sqlPath: string }[] = [
  { table: 'spend_month_days', sqlPath: 'src/store/sql/spend_month_days.sql' },
  { table: 'spend_month_lines', sqlPath: 'src/store/sql/spend_month_lines.sql' },
  { table: 'spend_month_framework_days', sqlPath: 'src/store/sql/spend_month_framework_days.sql' },
  { table: 'spend_month_split', sqlPath: 'src/store/sql/spend_month_split.sql' },
];
export const SPEND_MONTH_ROWS_SQL_FILE = 'src/store/sql/spend_month_rows.sql';

/** The statement of one step of a spend_daily month (its table is one of SPEND_MONTH_STEPS'). */
export function spendMonthStepSql(table: string, query: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${table} AS\n${query}`;
}

/** The statement staging a spend_daily month's rows (spend_month_rows.sql) as the unit. */
export function spendMonthStageSql(rows: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${STAGED_PARTITION} AS\n${rows}`;
}

/** Drops a spend_daily month's steps. */
export const dropSpendMonthStepSql = (table: string) => `DROP TABLE IF EXISTS temp.${table}`;

/** The runs whose usage rows the staged usage unit holds. */
export const STAGED_RUN_IDS = `SELECT coalesce(list(DISTINCT run_id ORDER BY run_id), []) AS run_ids FROM ${STAGED_PARTITION}`;

/** The runs that wrote a billing month's usage rows (parameters: $from, $to, the UTC month). */
export const MONTH_RUN_IDS = `SELECT coalesce(list(DISTINCT run_id ORDER BY run_id), []) AS run_ids FROM (
  SELECT run_id FROM usage_program_buckets WHERE timeframe_start >= $from AND timeframe_start < $to
  UNION SELECT run_id FROM usage_framework_buckets WHERE timeframe_start >= $from AND timeframe_start < $to)`;

/** The staged unit as zstd Parquet at `path` (COPY takes no parameter for its target). */
export function copyPartitionSql(stream: DatasetStream, path: string): string {
  return `COPY (SELECT * FROM ${STAGED_PARTITION} ${ORDER_SQL[stream]}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd)`;
}

export const DROP_STAGED_PARTITION = `DROP TABLE IF EXISTS temp.${STAGED_PARTITION}`;

// What the priced daily lines depend on besides usage. The price tables are small: their digest is
// taken on every export. The inventory columns the lines carry or choose current frameworks by (not
// last_seen_at, which every listing moves) change only in a run, so theirs is taken only after one.
const SUM_HASH = (cols: string) =>
  `CAST(count(*) AS VARCHAR) || '-' || CAST(coalesce(sum(CAST(hash(${cols}) AS HUGEINT)), 0) AS VARCHAR)`;
export const PRICES_DIGEST_SQL = `SELECT string_agg(d, '/' ORDER BY k) AS digest FROM (
  SELECT 1 AS k, ${SUM_HASH('t')} AS d FROM price_book t
  UNION ALL SELECT 2, ${SUM_HASH('t')} FROM price_metrics t
  UNION ALL SELECT 3, ${SUM_HASH('t')} FROM price_rates t
  UNION ALL SELECT 4, ${SUM_HASH('t')} FROM price_allowances t)`;
export const NAMES_DIGEST_SQL = `SELECT (SELECT ${SUM_HASH('program_id, org_id, name, created_at, deleted_at')} FROM programs)
  || '/' || (SELECT ${SUM_HASH('framework_id, program_id, name, created_at, deleted_at')} FROM frameworks) AS digest`;

/** The billing months with usage (a full re-check of spend_daily after a context change). */
export const SPEND_MONTHS_SQL = `SELECT DISTINCT strftime(timezone('UTC', timeframe_start), '%Y-%m') AS month FROM usage_program_buckets ORDER BY 1`;

/** [first instant, first instant after) of a UTC month 'YYYY-MM' or day 'YYYY-MM-DD'. */
export function unitRange(month: string, day?: string): { from: Date; to: Date } {
  if (day !== undefined) {
    const from = new Date(`${day}T00:00:00Z`);
    return { from, to: new Date(from.getTime() + 86_400_000) };
  }
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

/** The bound parameters of a unit's rows. */
export function partitionParams(p: DatasetPartitionKey): Record<string, unknown> {
  switch (p.stream) {
    case 'usage_program':
    case 'usage_framework': {
      if (p.granularity === undefined || p.month === undefined)
        throw new Error(`a ${p.stream} partition needs a granularity and a month`);
      if (p.granularity === 'hourly' && p.day === undefined)
        throw new Error(`an hourly ${p.stream} partition needs a day`);
      const { from, to } = unitRange(p.month, p.granularity === 'hourly' ? p.day : undefined);
      return { granularity: p.granularity, from, to };
    }
    case 'spend_daily':
      if (p.month === undefined) throw new Error('a spend_daily partition needs a month');
      return unitRange(p.month);
    default:
      return {};
  }
}

const iso = (d: Date) => d.toISOString();

/** The units a window's rows fall in: hourly usage by day, other granularities and spend by month. */
export function unitsOfWindow(w: ChangedWindow): DatasetPartitionKey[] {
  const out: DatasetPartitionKey[] = [];
  const byDay = w.granularity === 'hourly';
  const seenMonths = new Set<string>();
  // Step by day from the window's first UTC day up to its (exclusive) end.
  for (
    let t = Date.UTC(w.start.getUTCFullYear(), w.start.getUTCMonth(), w.start.getUTCDate());
    t < w.end.getTime();
    t += 86_400_000
  ) {
    const day = iso(new Date(t)).slice(0, 10);
    const month = day.slice(0, 7);
    if (!w.removal) {
      if (byDay) out.push({ stream: w.stream, granularity: w.granularity, month, day });
      else if (!seenMonths.has(month)) out.push({ stream: w.stream, granularity: w.granularity, month });
    }
    if (!seenMonths.has(month)) out.push({ stream: 'spend_daily', month });
    seenMonths.add(month);
  }
  return out;
}
