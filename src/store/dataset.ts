// The store's side of `export --dataset`: which partitions each stream of the dataset has (with a
// fingerprint of their rows), and one partition staged into a TEMP table and copied to Parquet. The
// streams are a closed set known at compile time, so every statement is a constant chosen by stream:
// no table name is spliced in at run time. Values (granularity, month bounds) are bound as $name
// parameters; the COPY target, which DuckDB takes only as a literal, goes through quoteLiteral.
import { quoteLiteral } from './sql.js';

export const DATASET_STREAMS = ['usage_program', 'usage_framework', 'spend_daily', 'programs', 'frameworks', 'snapshots'] as const;
export type DatasetStream = (typeof DATASET_STREAMS)[number];
export type DimensionStream = Extract<DatasetStream, 'programs' | 'frameworks' | 'snapshots'>;

/** One partition of a stream: usage streams by granularity and UTC month, spend_daily by billing
 *  month, a dimension whole. */
export interface DatasetPartitionKey {
  stream: DatasetStream;
  granularity?: string;
  /** 'YYYY-MM'. */
  month?: string;
}

export interface DatasetPartition extends DatasetPartitionKey {
  rows: bigint;
  /** Order-independent: count, xor and sum of row hashes over every column. */
  digest: string | null;
  /** The collection runs that wrote the rows (none for a dimension). */
  runIds: string[];
}

/** The TEMP table one partition is staged in, so that its Parquet and Arrow files hold the same rows. */
export const STAGED_PARTITION = 'export_partition';

// The partition listings, one per stream. Long ones are files beside this module.
export const PARTITIONS_SQL_FILE: Record<Exclude<DatasetStream, DimensionStream>, string> = {
  usage_program: 'src/store/sql/partitions_usage_program.sql',
  usage_framework: 'src/store/sql/partitions_usage_framework.sql',
  spend_daily: 'src/store/sql/partitions_spend_daily.sql',
};

// A dimension is one unpartitioned file; inventory rows carry no run id.
const dimensionPartition = (table: DimensionStream) =>
  `SELECT count(*) AS n_rows,
       CAST(bit_xor(hash(t)) AS VARCHAR) || '-' || CAST(coalesce(sum(CAST(hash(t) AS HUGEINT)), 0) AS VARCHAR) AS digest,
       CAST([] AS VARCHAR[]) AS run_ids
FROM ${table} t`;
export const DIMENSION_PARTITION_SQL: Record<DimensionStream, string> = {
  programs: dimensionPartition('programs'),
  frameworks: dimensionPartition('frameworks'),
  snapshots: dimensionPartition('snapshots'),
};

// A partition's rows, in key order. Usage rows leave out the partition column (Hive layout: it is in
// the path). Parameters: usage $granularity, $from, $to (TIMESTAMPTZ, the UTC month); spend_daily
// $from (the billing month's first day); dimensions none.
const ROWS_SQL: Record<DatasetStream, string> = {
  usage_program: `SELECT * EXCLUDE (granularity) FROM usage_program
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to
ORDER BY api_version, program_id, period_id, timeframe_start, metric`,
  usage_framework: `SELECT * EXCLUDE (granularity) FROM usage_framework
WHERE granularity = $granularity AND timeframe_start >= $from AND timeframe_start < $to
ORDER BY program_id, framework_id, period_id, timeframe_start, metric`,
  spend_daily: `SELECT * FROM spend_daily
WHERE billing_month = CAST($from AS DATE)
ORDER BY usage_day, org_id NULLS FIRST, program_id, line_type, framework_id NULLS FIRST, metric, period_id, rate_id NULLS FIRST, line_id`,
  programs: 'SELECT * FROM programs ORDER BY ALL',
  frameworks: 'SELECT * FROM frameworks ORDER BY ALL',
  snapshots: 'SELECT * FROM snapshots ORDER BY ALL',
};

/** The statement staging one partition of `stream` (parameters those of its rows). */
export function stagePartitionSql(stream: DatasetStream): string {
  return `CREATE OR REPLACE TEMP TABLE ${STAGED_PARTITION} AS\n${ROWS_SQL[stream]}`;
}

/** The staged partition as zstd Parquet at `path` (COPY takes no parameter for its target). */
export function copyPartitionSql(path: string): string {
  return `COPY ${STAGED_PARTITION} TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd)`;
}

export const DROP_STAGED_PARTITION = `DROP TABLE IF EXISTS temp.${STAGED_PARTITION}`;

/** The UTC month 'YYYY-MM' as [first instant, first instant of the next month). */
function monthRange(month: string): { from: Date; to: Date } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return { from: new Date(Date.UTC(y, m - 1, 1)), to: new Date(Date.UTC(y, m, 1)) };
}

/** The bound parameters of a partition's rows. */
export function partitionParams(p: DatasetPartitionKey): Record<string, unknown> {
  switch (p.stream) {
    case 'usage_program':
    case 'usage_framework': {
      if (p.granularity === undefined || p.month === undefined) throw new Error(`a ${p.stream} partition needs a granularity and a month`);
      const { from, to } = monthRange(p.month);
      return { granularity: p.granularity, from, to };
    }
    case 'spend_daily':
      if (p.month === undefined) throw new Error('a spend_daily partition needs a month');
      return { from: monthRange(p.month).from };
    default:
      return {};
  }
}
