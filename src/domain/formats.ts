// The report and export formats, in a module of their own so that loading the configuration does not load the writers.

/** parquet: one file per report; xlsx: the workbook. */
export type ReportFormat = 'parquet' | 'xlsx';
export const REPORT_FORMATS: readonly ReportFormat[] = ['parquet', 'xlsx'];
/**
 * Every output runReport can write: the report formats, plus focus (focus-<period>.parquet, FOCUS 1.2)
 * html (report.html, the charts; the workbook's Summary links to it when both are written) and arrow
 * (one Arrow IPC file per report, <name>.arrow, for dataframes).
 */
export type OutputFormat = ReportFormat | 'focus' | 'html' | 'arrow';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['parquet', 'xlsx', 'focus', 'html', 'arrow'];
/** What `export --dataset` writes: the Parquet dataset, plus Arrow IPC copies under DIR/_arrow with arrow. */
export type ExportFormat = 'parquet' | 'arrow';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['parquet', 'arrow'];
