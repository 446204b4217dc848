// The reports: each is one SQL file in src/report/sql, one Parquet file and one (or more, when
// split) worksheet. The SQL files hold the logic; this module only names them.

export type ReportName = 'program_spend' | 'framework_spend' | 'snapshot_storage' | 'transfer';

export interface ReportDefinition {
  name: ReportName;
  sqlPath: string;
  title: string;
  /** Takes $framework_metrics besides the period parameters. */
  needsFrameworkMetrics?: boolean;
}

export const REPORTS: readonly ReportDefinition[] = [
  { name: 'program_spend', sqlPath: 'src/report/sql/program_spend.sql', title: 'Spend per program, plan and metric' },
  { name: 'framework_spend', sqlPath: 'src/report/sql/framework_spend.sql', title: 'Spend per framework, with reconciliation to the program', needsFrameworkMetrics: true },
  { name: 'snapshot_storage', sqlPath: 'src/report/sql/snapshot_storage.sql', title: 'Snapshot storage per program and day' },
  { name: 'transfer', sqlPath: 'src/report/sql/transfer.sql', title: 'Public and private transfer per program, framework and day' },
];

/** The TEMP table a report is materialised into for the duration of a run. */
export function reportTable(name: ReportName): string {
  return `rpt_${name}`;
}

export const ROUNDING_RULE =
  'Quantities are exact integers until priced. Each line is priced once at the rate in force at its buckets\' ' +
  'timeframe_start for the plan of its period, and rounded to cents once, half-up (away from zero). ' +
  'Every total is the sum of the rounded lines above it. Allowances are netted in time order at the scope the price book names.';
