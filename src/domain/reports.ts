// The reports by name, and the TEMP table each is materialised into for the duration of a run
// (ARCHITECTURE.md, "Reports"): a closed set, so the store can name their tables in SQL.

export type ReportName = 'program_spend' | 'framework_spend' | 'snapshot_storage' | 'transfer';
export const REPORT_NAMES: readonly ReportName[] = ['program_spend', 'framework_spend', 'snapshot_storage', 'transfer'];

/** The TEMP table a report is materialised into for the duration of a run. */
export function reportTable(name: ReportName): `rpt_${ReportName}` {
  return `rpt_${name}`;
}
