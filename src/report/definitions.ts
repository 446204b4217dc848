// The reports: each is one SQL file in src/report/sql, one Parquet file and one (or more, when
// split) worksheet. The SQL files hold the logic; this module only names them.

export type ReportName = 'program_spend' | 'framework_spend' | 'snapshot_storage' | 'transfer';

export interface ReportDefinition {
  name: ReportName;
  sqlPath: string;
  title: string;
  /**
   * The stage it reads (src/report/stages.ts; no report takes parameters): 'days' (rpt_days, so it is
   * materialised before the detail, which reads it) or 'chunk' (one chunk of the detail rpt_daily at a
   * time, as rpt_daily_chunk, its lines numbered program first on from $line_offset: its lines never
   * span programs, so no query holds all the detail).
   */
  basis: 'days' | 'chunk';
}

export const REPORTS: readonly ReportDefinition[] = [
  { name: 'program_spend', sqlPath: 'src/report/sql/program_spend.sql', title: 'Spend per program, plan and metric', basis: 'days' },
  { name: 'framework_spend', sqlPath: 'src/report/sql/framework_spend.sql', title: 'Spend per framework, with the charges that have no framework', basis: 'chunk' },
  { name: 'snapshot_storage', sqlPath: 'src/report/sql/snapshot_storage.sql', title: 'Snapshot storage per program and day', basis: 'chunk' },
  { name: 'transfer', sqlPath: 'src/report/sql/transfer.sql', title: 'Public and private transfer per program, framework and day', basis: 'chunk' },
];

/** The TEMP table a report is materialised into for the duration of a run. */
export function reportTable(name: ReportName): string {
  return `rpt_${name}`;
}

export const ROUNDING_RULE =
  'Quantities are exact integers until priced. Each line is priced once at the rate in force at its buckets\' ' +
  'timeframe_start for the plan of its period, and rounded to cents once, half-up (away from zero). ' +
  'Every total is the sum of the rounded lines above it. Every other report (frameworks, snapshot storage, transfer, ' +
  'FOCUS, charts) divides a program line\'s rounded cost over its days and frameworks by largest remainder, so it adds ' +
  'up to program_spend per line, per program and in total; nothing is rounded twice.';

export const ALLOWANCE_RULE =
  'Included allowances are used in time order as usage accrues, the same way in every report: within each pool ' +
  '(the scope the price book names x billing month) day by day, then by plan period, rate and program on the same day; ' +
  'within a program\'s day by framework id, the usage no current framework accounts for last.';

export const GAUGE_RULE =
  'Metrics billed on a peak (v1 synthetic_storage_size_bytes, logical_size_bytes) are charged once per month: the ' +
  'month\'s peak, shared between the plan periods and rates of the month by the share of the month each covers.';
