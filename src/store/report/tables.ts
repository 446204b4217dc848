// Reads and copies of the report's TEMP tables (the report tables, the detail, FOCUS, corrections,
// the workbook's summaries, the dataset's staged partition) and the report's small reads: totals,
// run ids, charts, summaries, labels, rates. Each table is one the store created under a fixed name
// (reportRelation checks it): an identifier or a COPY target cannot be bound, so those few
// statements are built here with quoteIdent/quoteLiteral; every value is a bound $name parameter.
import type { Granularity } from '../../domain/granularity.js';
import type { ReportName } from '../../domain/reports.js';
import { STAGED_PARTITION } from '../dataset.js';
import type { StoreContext } from '../facade/context.js';
import { quoteIdent, quoteLiteral, readSql } from '../sql.js';

/** The tables the workbook writes as sheets: the reports and the corrections. */
export type SheetTable = `rpt_${ReportName}` | 'rpt_corrections';
/** The groupings of a sheet's summary. */
export type SummaryPart = 'by_program' | 'by_metric' | 'by_day';
/** The workbook's summaries of a report too large for a sheet: one TEMP table per grouping beside it. */
export type SummaryTable = `${SheetTable}__${SummaryPart}`;

/**
 * The TEMP relations of a report run that callers read, write out or summarise: the reports, the detail
 * (stages.ts), the corrections (finalize.ts), FOCUS (focus.ts), the workbook's summaries, and the dataset
 * export's staged partition. The intermediate stages are stages.ts's own.
 */
export type ReportTable =
  | `rpt_${ReportName}`
  | 'rpt_daily'
  | 'rpt_corrections'
  | 'rpt_focus'
  | 'rpt_focus_current'
  | SummaryTable
  | typeof STAGED_PARTITION;

/** The report's TEMP relations are named rpt_…; the dataset export stages its partition in STAGED_PARTITION. */
const REPORT_RELATION = /^rpt_[a-z0-9_]+$/;

/** A TEMP relation of the report's closed set of names, quoted; anything else is a bug, refused (the type
 *  says so too: the check stays for a name built at run time). */
function reportRelation(name: ReportTable): string {
  if (!REPORT_RELATION.test(name) && name !== STAGED_PARTITION)
    throw new Error(`"${name}" is not a report table of the store`);
  return quoteIdent(name);
}

/** The report's period as the report SQL binds it. */
export interface ReportRange {
  granularity: Granularity;
  range_start: Date;
  range_end: Date;
}

/** One day's spend of a top program, or of the other programs together (program_id and program_name null). */
export interface DailySpendRow {
  program_id: string | null;
  program_name: string | null;
  day: Date;
  cost: string;
}
/** A program's spend in one span of the forecast (forecast_programs.sql; day: the span's first day). */
export interface ForecastSpanRow {
  program_id: string;
  program_name: string;
  day: Date;
  cost: string;
}
export interface TopProgramRow {
  program_id: string;
  name: string;
  cost: string;
}
export interface TopFrameworkRow {
  framework_id: string;
  name: string;
  program_name: string;
  cost: string;
}
export interface StorageDayRow {
  day: Date;
  metric: string;
  gb_month: string;
}
/** Counts are null on days before snapshots_known_from. */
export interface SnapshotDayRow {
  day: Date;
  snapshots: bigint | null;
  manual: bigint | null;
  scheduled: bigint | null;
  known_from: Date | null;
}
export interface TransferDayRow {
  day: Date;
  metric: string;
  gb: string;
  cost: string;
}

/** The HTML report's charts, as the chart SQL gives them (decimals as strings, days as Dates). */
export interface ChartData {
  topPrograms: TopProgramRow[];
  topFrameworks: TopFrameworkRow[];
  storage: StorageDayRow[];
  snapshots: SnapshotDayRow[];
  transfer: TransferDayRow[];
  dailySpend: DailySpendRow[];
}

export interface TableColumn {
  column_name: string;
  data_type: string;
}

// (money_totals) No parameters. Row count and the sum of the rounded costs of a materialised report:
// the totals row of its sheet and the report's total.
const moneyTotalsSql = (
  table: ReportTable,
) => `SELECT count(*) AS n_rows, CAST(coalesce(sum(cost), 0) AS DECIMAL(18,2)) AS cost,
       CAST(count(*) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_lines
FROM ${reportRelation(table)};`;

// (copy_parquet) Rows in line order, zstd, so the same rows give the same bytes; DuckDB writes no
// timestamp into the file. Every report table is created in line order (ORDER BY line_no) and a
// report runs with preserve_insertion_order on (report/run.ts), so the table is read in line order
// without sorting it again (a sort of millions of wide rows would spill to disk for nothing). COPY
// takes no parameter for its target: the path is quoted.
const copyParquetSql = (table: ReportTable, path: string) =>
  `COPY (SELECT * FROM ${reportRelation(table)}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880);`;

// (copy_focus_parquet) The FOCUS file holds the FOCUS and x_ columns only (line_no orders the rows
// but is not a FOCUS column); zstd; timestamps are written as Parquet TIMESTAMP (isAdjustedToUTC,
// micros). The table is created in line order and read in insertion order (see copyParquetSql).
// Row groups of 30,720 rows (a quarter of DuckDB's default): the writer holds a whole row group
// before it compresses it, and a FOCUS row is wide (about 1.5 KB in memory), so DuckDB's default held
// more than the report's memory limit leaves; a file of fewer rows is unchanged.
// x_CostBasis says on every row what FOCUS's cost columns are here: estimates from a price book
// revision, not an invoice. Written with the file, not stored with the rows a finalisation records.
const copyFocusParquetSql = (table: ReportTable, path: string) =>
  `COPY (SELECT * EXCLUDE (line_no), 'estimate from price book revision ' || "x_PriceBookRevision" || ', not an invoice' AS "x_CostBasis"
  FROM ${reportRelation(table)}) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 30720);`;

// (page) Parameters: $after BIGINT, $upto BIGINT. One page of a materialised report in line order,
// for the workbook writer.
const pageSql = (table: ReportTable) =>
  `SELECT * FROM ${reportRelation(table)} WHERE line_no > $after AND line_no <= $upto ORDER BY line_no;`;

// No parameters. The charts' extent: rows of spend per program and day (the manifest's row count of
// the HTML file) and programs.
const DAILY_SPEND_SHAPE_SQL =
  'SELECT count(*) AS day_rows, count(DISTINCT program_id) AS programs FROM (SELECT DISTINCT program_id, usage_day FROM rpt_daily)';

/** A column as DESCRIBE gives it. */
export interface DescribedColumn {
  column_name: string;
  column_type: string;
}

const DECIMAL = /^DECIMAL\((\d+),(\d+)\)$/;

/** How each DuckDB type is read so that no value passes through a float (for the Arrow writer). */
function exactProjection(c: DescribedColumn): string {
  const id = quoteIdent(c.column_name);
  const dec = DECIMAL.exec(c.column_type);
  if (dec) return `CAST(CAST(${id} * CAST(10 ** ${dec[2]} AS HUGEINT) AS HUGEINT) AS VARCHAR) AS ${id}`;
  if (c.column_type === 'TIMESTAMP WITH TIME ZONE' || c.column_type === 'TIMESTAMP') return `epoch_us(${id}) AS ${id}`;
  if (c.column_type === 'DATE') return `CAST(date_diff('day', DATE '1970-01-01', ${id}) AS INTEGER) AS ${id}`;
  if (c.column_type === 'HUGEINT' || c.column_type === 'UBIGINT') return `CAST(${id} AS VARCHAR) AS ${id}`;
  return id;
}

/** Reads and copies of the report's TEMP tables (Store.report.tables). */
export class ReportTables {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** A TEMP table's columns in order, with their types (table_columns.sql). */
  async tableColumns(table: ReportTable): Promise<TableColumn[]> {
    return this.cx.sql.query<TableColumn>(readSql('src/store/report/sql/table_columns.sql'), { table });
  }

  /** Rows, total cost and unpriced lines of a materialised report. */
  async moneyTotals(table: ReportTable): Promise<{ n_rows: bigint; cost: string; unpriced_lines: bigint }> {
    const [t] = await this.cx.sql.query<{ n_rows: bigint; cost: string; unpriced_lines: bigint }>(
      moneyTotalsSql(table),
    );
    return t!;
  }

  /** A report table as a Parquet file at `path`. */
  async copyTableToParquet(table: ReportTable, path: string): Promise<void> {
    await this.cx.sql.run(copyParquetSql(table, path));
  }

  /** The FOCUS table as the FOCUS Parquet file at `path` (without line_no). */
  async copyFocusToParquet(table: ReportTable, path: string): Promise<void> {
    await this.cx.sql.run(copyFocusParquetSql(table, path));
  }

  /** The lines of a report table in (after, upto], in line order. */
  async reportPage(table: ReportTable, after: number, upto: number): Promise<Record<string, unknown>[]> {
    return this.cx.sql.query(pageSql(table), { after: BigInt(after), upto: BigInt(upto) });
  }

  /** The collection runs whose data the period's report read. */
  async reportRunIds(range: ReportRange): Promise<string[]> {
    return (await this.cx.sql.query<{ run_id: string }>(readSql('src/store/report/sql/run_ids.sql'), { ...range })).map(
      (r) => r.run_id,
    );
  }

  /** Spend per day of each of the `top` programs and of all the others together (program_id null), for the charts. */
  async dailySpend(top: string[]): Promise<DailySpendRow[]> {
    return this.cx.sql.query<DailySpendRow>(readSql('src/store/report/sql/chart_daily_spend.sql'), { top });
  }

  /** How many program-days and programs the detail (rpt_daily) has. */
  async dailySpendShape(): Promise<{ dayRows: number; programs: number }> {
    const [r] = await this.cx.sql.query<{ day_rows: bigint; programs: bigint }>(DAILY_SPEND_SHAPE_SQL);
    return { dayRows: Number(r!.day_rows), programs: Number(r!.programs) };
  }

  /**
   * Each program's spend in the forecast's three spans (before the trend window, inside it, from the
   * cutoff on; forecast_programs.sql): at most three rows per program instead of one per program and day.
   * Days are UTC dates, YYYY-MM-DD.
   */
  async forecastPrograms(o: { cutoffDay: string; windowStartDay: string }): Promise<ForecastSpanRow[]> {
    return this.cx.sql.query<ForecastSpanRow>(readSql('src/store/report/sql/forecast_programs.sql'), {
      cutoff_day: o.cutoffDay,
      window_start_day: o.windowStartDay,
    });
  }

  /** The HTML report's charts, each read from the run's report tables. */
  async chartData(o: { topPrograms: number; topFrameworks: number }): Promise<ChartData> {
    const sql = this.cx.sql;
    const topPrograms = await sql.query<TopProgramRow>(readSql('src/store/report/sql/chart_top_programs.sql'), {
      limit: BigInt(o.topPrograms),
    });
    return {
      topPrograms,
      dailySpend: await this.dailySpend(topPrograms.map((p) => p.program_id)),
      topFrameworks: await sql.query<TopFrameworkRow>(readSql('src/store/report/sql/chart_top_frameworks.sql'), {
        limit: BigInt(o.topFrameworks),
      }),
      storage: await sql.query<StorageDayRow>(readSql('src/store/report/sql/chart_storage.sql')),
      snapshots: await sql.query<SnapshotDayRow>(readSql('src/store/report/sql/chart_snapshots.sql')),
      transfer: await sql.query<TransferDayRow>(readSql('src/store/report/sql/chart_transfer.sql')),
    };
  }

  /** Where the period's data ends (null: no data). */
  async dataEnd(range: ReportRange): Promise<Date | null> {
    const [end] = await this.cx.sql.query<{ data_end: Date | null }>(readSql('src/store/report/sql/data_end.sql'), {
      ...range,
    });
    return end?.data_end ?? null;
  }

  /** The workbook's Summary: spend by program and by metric, and each program's label. */
  async workbookSummary(rangeEnd: Date): Promise<{
    byProgram: Record<string, unknown>[];
    byMetric: Record<string, unknown>[];
    programLabels: Map<string, string>;
  }> {
    const sql = this.cx.sql;
    const byProgram = await sql.query(readSql('src/store/report/sql/summary_by_program.sql'));
    const byMetric = await sql.query(readSql('src/store/report/sql/summary_by_metric.sql'));
    const programLabels = new Map(
      (
        await sql.query<{ program_id: string; label: string }>(readSql('src/store/report/sql/program_labels.sql'), {
          range_end: rangeEnd,
        })
      ).map((r) => [r.program_id, r.label]),
    );
    return { byProgram, byMetric, programLabels };
  }

  /** The assumed rates that priced lines of program_spend, with their lines and cost. */
  async assumedRateUse(
    rateIds: string[],
  ): Promise<{ rate_id: string; plan: string; metric: string; rate: string; lines: bigint; cost: string }[]> {
    return this.cx.sql.query(readSql('src/store/report/sql/assumed_rates.sql'), { rate_ids: rateIds });
  }

  /** Rates that start or end inside the period (monthly data cannot price the change). */
  async rateChangesInside(
    range: ReportRange,
  ): Promise<{ rate_id: string; plan: string; metric: string; effective_from: Date; effective_to: Date | null }[]> {
    return this.cx.sql.query(readSql('src/store/report/sql/rate_changes_inside.sql'), { ...range });
  }

  /** Each scope's coverage of the range per granularity (coverage.sql). */
  async coverageOfRange(
    rangeStart: Date,
    rangeEnd: Date,
  ): Promise<
    {
      source: string;
      granularity: Granularity;
      scope: string;
      covered_ms: bigint;
      statuses: string;
      run_ids: string;
    }[]
  > {
    return this.cx.sql.query(readSql('src/store/report/sql/coverage.sql'), {
      range_start: rangeStart,
      range_end: rangeEnd,
    });
  }

  /** The granularities with data in the range. */
  async dataGranularities(rangeStart: Date, rangeEnd: Date): Promise<{ granularity: Granularity; n_rows: bigint }[]> {
    return this.cx.sql.query(readSql('src/store/report/sql/data_granularities.sql'), {
      range_start: rangeStart,
      range_end: rangeEnd,
    });
  }

  /**
   * A summary of a report table too large for a sheet, as TEMP table `table` beside it, grouped by
   * `keys`: quantities summed in their own units (DECIMAL columns), cost the sum of the report's
   * (already allocated) cents, so every summary adds up to the report's total. Returns its columns and rows.
   */
  async summariseTable(o: {
    table: SummaryTable;
    source: ReportTable;
    columns: { name: string; type: string }[];
    costColumn: string;
    keys: string[];
  }): Promise<{ columns: TableColumn[]; rows: number }> {
    const has = (n: string) => o.columns.some((c) => c.name === n);
    const costCol = o.costColumn;
    const quantities = o.columns.filter(
      (c) => c.type.startsWith('DECIMAL') && c.type !== 'DECIMAL(18,2)' && c.name !== 'rate',
    );
    const keys = o.keys.filter(has).map(quoteIdent);
    const select = [
      ...keys,
      ...(o.keys.includes('program_id') && has('program_name') ? ['any_value(program_name) AS program_name'] : []),
      ...(o.keys.includes('metric') && has('billing_unit') ? ['any_value(billing_unit) AS billing_unit'] : []),
      'CAST(count(*) AS BIGINT) AS lines',
      ...quantities.map((q) => `CAST(sum(${quoteIdent(q.name)}) AS ${q.type}) AS ${quoteIdent(q.name)}`),
      `CAST(sum(${quoteIdent(costCol)}) AS DECIMAL(18,2)) AS ${quoteIdent(costCol)}`,
      ...(has('priced') ? ['CAST(count(*) FILTER (WHERE NOT priced) AS BIGINT) AS unpriced_lines'] : []),
    ];
    const order = keys.map((k) => `${k} NULLS FIRST`).join(', ');
    const sql = this.cx.sql;
    await sql.run(
      `CREATE OR REPLACE TEMP TABLE ${reportRelation(o.table)} AS SELECT row_number() OVER (ORDER BY ${order}) AS line_no, * ` +
        `FROM (SELECT ${select.join(', ')} FROM ${reportRelation(o.source)} GROUP BY ${keys.join(', ')}) ORDER BY line_no`,
    );
    const columns = await this.tableColumns(o.table);
    const [n] = await sql.query<{ n: bigint }>(`SELECT count(*) AS n FROM ${reportRelation(o.table)}`);
    return { columns, rows: Number(n!.n) };
  }

  /** A table's columns (DESCRIBE). */
  async describeTable(table: ReportTable): Promise<DescribedColumn[]> {
    return this.cx.sql.query<DescribedColumn>(`DESCRIBE ${reportRelation(table)}`);
  }

  /** Row count and the first and last value of `key` (line_no or rowid). */
  async keyBounds(
    table: ReportTable,
    key: 'line_no' | 'rowid',
  ): Promise<{ n: bigint; first: bigint | null; last: bigint | null }> {
    const [bounds] = await this.cx.sql.query<{ n: bigint; first: bigint | null; last: bigint | null }>(
      `SELECT count(*)::BIGINT AS n, min(${key})::BIGINT AS first, max(${key})::BIGINT AS last FROM ${reportRelation(table)}`,
    );
    return bounds!;
  }

  /**
   * The rows with `key` in [from, to), in key order, each column read exactly (exactProjection):
   * DECIMAL as its scaled integer in text, timestamps as epoch microseconds, DATE as days.
   */
  async exactRows(
    table: ReportTable,
    cols: DescribedColumn[],
    key: 'line_no' | 'rowid',
    from: bigint,
    to: bigint,
  ): Promise<Record<string, unknown>[]> {
    return this.cx.sql.query<Record<string, unknown>>(
      `SELECT ${cols.map(exactProjection).join(', ')} FROM ${reportRelation(table)} WHERE ${key} >= $from AND ${key} < $to ORDER BY ${key}`,
      { from, to },
    );
  }
}
