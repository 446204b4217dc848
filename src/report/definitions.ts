// The reports: each is one SQL file of the store (src/store/report/stages.ts names them), one
// Parquet file and one (or more, when split) worksheet. This module gives them their titles.
import type { ReportName } from '../domain/reports.js';

export { reportTable, type ReportName } from '../domain/reports.js';

export interface ReportDefinition {
  name: ReportName;
  title: string;
}

export const REPORTS: readonly ReportDefinition[] = [
  { name: 'program_spend', title: 'Spend per program, plan and metric' },
  { name: 'framework_spend', title: 'Spend per framework, with the charges that have no framework' },
  { name: 'snapshot_storage', title: 'Snapshot storage per program and day' },
  { name: 'transfer', title: 'Public and private transfer per program, framework and day' },
];

export const ROUNDING_RULE =
  "Quantities are exact integers until priced. Each line is priced once at the rate in force at its buckets' " +
  'timeframe_start for the plan of its period, and rounded to cents once, half-up (away from zero). ' +
  'Every total is the sum of the rounded lines above it. Every other report (frameworks, snapshot storage, transfer, ' +
  "FOCUS, charts) divides a program line's rounded cost over its days and frameworks by largest remainder, so it adds " +
  'up to program_spend per line, per program and in total; nothing is rounded twice.';

export const ALLOWANCE_RULE =
  'Included allowances are used in time order as usage accrues, the same way in every report: within each pool ' +
  '(the scope the price book names x billing month) day by day, then by plan period, rate and program on the same day; ' +
  "within a program's day by framework id, the usage no current framework accounts for last.";

export const GAUGE_RULE =
  'Metrics billed on a peak (v1 synthetic_storage_size_bytes, logical_size_bytes) are charged once per month: the ' +
  "month's peak, shared between the plan periods and rates of the month by the share of the month each covers.";
