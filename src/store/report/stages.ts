// The report's tables (the store's side of report/run.ts), computed in stages so that memory stays bounded at any number of programs
// (ARCHITECTURE.md, "Reports"): spend_program_days once (rpt_days: its allowance windows run over
// whole pools), program_spend from it, the frameworks' usage one chunk at a time, then the detail (rpt_daily) one
// chunk of programs at a time (every window of the split is per day or per line), appended in line
// order; the other reports read rpt_daily. Each stage is a macro of migration 009 that the analysts'
// spend views chain too, so the report and the views share one SQL.
import { V2_FRAMEWORK_METRICS } from '../../contract/api.js';
import { REPORT_NAMES, reportTable, type ReportName } from '../../domain/reports.js';
import { silentLogger, type Logger } from '../../log.js';
import type { StoreContext } from '../facade/context.js';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral, readSql } from '../sql.js';
import type { ReportTable } from './tables.js';

/**
 * Each report's SQL file and the stage it reads (no report takes parameters): 'days' (rpt_days, so it
 * is materialised before the detail, which reads it) or 'chunk' (one chunk of the detail rpt_daily at
 * a time, as rpt_daily_chunk, its lines numbered program first on from $line_offset: its lines never
 * span programs, so no query holds all the detail).
 */
const REPORT_STAGES: Record<ReportName, { sqlPath: string; basis: 'days' | 'chunk' }> = {
  program_spend: { sqlPath: 'src/store/report/sql/program_spend.sql', basis: 'days' },
  framework_spend: { sqlPath: 'src/store/report/sql/framework_spend.sql', basis: 'chunk' },
  snapshot_storage: { sqlPath: 'src/store/report/sql/snapshot_storage.sql', basis: 'chunk' },
  transfer: { sqlPath: 'src/store/report/sql/transfer.sql', basis: 'chunk' },
};
const reportsOf = (basis: 'days' | 'chunk') => REPORT_NAMES.filter((n) => REPORT_STAGES[n].basis === basis);

/** The TEMP table of each line's cost spread over its days and frameworks (daily_chunk.sql). */
export const DAILY_TABLE = 'rpt_daily';
const DAYS_TABLE = 'rpt_days';
const DAYS_UNSORTED_TABLE = 'rpt_days_unsorted';
const FRAMEWORK_DAYS_TABLE = 'rpt_framework_days';
const CHUNKS_TABLE = 'rpt_chunks';
/**
 * Programs whose detail (and whose FOCUS rows, framework_spend, snapshot_storage and transfer) are
 * computed in one statement: at 10,000 programs and 100,000 frameworks, chunks of 1,000 ran out of
 * memory in their windows, and of 250 in FOCUS's numbering.
 */
export const PROGRAMS_PER_CHUNK = 100;
/** No chunk has this number: the statement that creates rpt_daily empty, with the chunks' columns. */
const NO_CHUNK = -1n;

// The unordered stages (read by joins, never copied to a file) may be built in any order, which lets
// DuckDB stream and spill them; the report tables and rpt_daily are built with insertion order kept.
const UNORDERED = 'SET preserve_insertion_order = false';
const ORDERED = 'SET preserve_insertion_order = true';
const TEMP_TABLE_COUNT =
  "SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = 'temp' AND table_name = $name";
const TEMP_VIEW_COUNT = "SELECT count(*) AS n FROM duckdb_views() WHERE database_name = 'temp' AND view_name = $name";
const PART_ROWS = 'SELECT num_rows AS n FROM parquet_file_metadata($path)';
const SHAPE_TABLE = 'rpt_shape';
/**
 * Rows per row group of a stage part: the Parquet writer holds a whole row group before compressing
 * it, and a FOCUS row is wide (about 1.5 KB in memory); a twelfth of DuckDB's default 122,880 keeps
 * that buffer near 15 MB. Parts are read back whole, so their row groups change no file.
 */
const PART_ROW_GROUP = 10_240;
/** DuckDB types Parquet cannot hold exactly (written as DECIMAL(38,0)). */
const WIDE_INTEGERS = new Set(['HUGEINT', 'UHUGEINT']);
const stageSql = (path: string) => readSql(path).trim().replace(/;\s*$/, '');
const CHUNK_COUNT = `SELECT coalesce(max(chunk) + 1, 0) AS n FROM ${CHUNKS_TABLE}`;
/** Each chunk's program ids, in chunk order (the frameworks' stage filters on them). */
const CHUNK_PROGRAMS = `SELECT chunk, list(DISTINCT program_id) AS programs FROM ${CHUNKS_TABLE} GROUP BY chunk ORDER BY chunk`;

export interface StageParams {
  granularity: string;
  range_start: Date;
  range_end: Date;
}

/**
 * Runs a query once into a TEMP table that every writer then reads, so Parquet and workbook hold the
 * same rows; the query's own parameters are bound to this statement. The table is a name of the
 * store's report stages (a closed set): an identifier cannot be bound, so it is quoted here.
 */
export function materialiseSql(table: string, query: string): string {
  return `CREATE OR REPLACE TEMP TABLE ${quoteIdent(table)} AS\n${query}`;
}

/** Runs a query once into a TEMP table (materialiseSql) that every writer then reads. */
async function materialise(
  cx: StoreContext,
  table: string,
  sqlPath: string,
  params?: Record<string, unknown>,
  log: Logger = silentLogger,
): Promise<void> {
  const t0 = performance.now();
  const sql = materialiseSql(table, readSql(sqlPath).trim().replace(/;\s*$/, ''));
  await cx.sql.run(sql, params);
  log.debug('report stage', { table, ms: Math.round(performance.now() - t0) });
}

/** A column of a stage's query: its name and DuckDB type. */
interface StageColumn {
  column_name: string;
  data_type: string;
}

/** The columns a query gives (its result created empty, read from the catalog, dropped). */
async function columnsOf(cx: StoreContext, sql: string, params: Record<string, unknown>): Promise<StageColumn[]> {
  await cx.sql.run(
    `CREATE OR REPLACE TEMP TABLE ${quoteIdent(SHAPE_TABLE)} AS SELECT * FROM (${sql}) WHERE false`,
    params,
  );
  const cols = await cx.sql.query<StageColumn>(readSql('src/store/report/sql/table_columns.sql'), {
    table: SHAPE_TABLE,
  });
  await cx.sql.run(`DROP TABLE ${quoteIdent(SHAPE_TABLE)}`);
  return cols;
}

/**
 * A large stage is written to zstd Parquet files in the run's scratch folder (one per chunk, in
 * order) and read back through a TEMP view of the same name: DuckDB's TEMP tables are kept
 * uncompressed and their blocks must be pinned to be appended to or read, which at 10,000 programs ran
 * out of memory; a Parquet scan streams. Parquet has no HUGEINT, so those columns travel as
 * DECIMAL(38,0) (exact) and the view casts every column back to the query's own type.
 */
export class ParquetStage {
  private readonly parts: string[] = [];
  private readonly counts: number[] = [];
  private constructor(
    private readonly cx: StoreContext,
    private readonly name: string,
    private readonly dir: string,
    private readonly columns: StageColumn[],
  ) {}

  static async open(
    cx: StoreContext,
    name: string,
    dir: string,
    sql: string,
    shapeParams: Record<string, unknown>,
  ): Promise<ParquetStage> {
    return new ParquetStage(cx, name, dir, await columnsOf(cx, sql, shapeParams));
  }

  /** Appends the rows of `sql` (in its order) as the next part. */
  async append(sql: string, params: Record<string, unknown>): Promise<void> {
    const path = join(this.dir, `${this.name}-${String(this.parts.length).padStart(5, '0')}.parquet`);
    const select = this.columns
      .map((c) =>
        WIDE_INTEGERS.has(c.data_type)
          ? `CAST(${quoteIdent(c.column_name)} AS DECIMAL(38,0)) AS ${quoteIdent(c.column_name)}`
          : quoteIdent(c.column_name),
      )
      .join(', ');
    await this.cx.sql.run(
      `COPY (SELECT ${select} FROM (${sql})) TO ${quoteLiteral(path)} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${PART_ROW_GROUP})`,
      params,
    );
    const [m] = await this.cx.sql.query<{ n: bigint }>(PART_ROWS, { path });
    this.parts.push(path);
    this.counts.push(Number(m?.n ?? 0n));
    // A part's query frees what it used, but the allocators keep it (ARCHITECTURE.md, "Reports", "Memory").
    await this.cx.releaseMemory();
  }

  /** The number of parts appended. */
  get partCount(): number {
    return this.parts.length;
  }

  /** The rows of part i (from its Parquet footer). */
  partRows(i: number): number {
    return this.counts[i]!;
  }

  /**
   * A TEMP view `name` over part i alone, with the query's own types (a chunk's rows, for a later
   * stage per chunk); with `programs` (a TEMP table of org_id, program_id), only those programs' rows.
   */
  async publishPart(i: number, name: string, programs?: string): Promise<void> {
    await dropTempRelation(this.cx, name);
    const from = `read_parquet(${quoteLiteral(this.parts[i]!)}) d`;
    const only =
      programs === undefined
        ? ''
        : ` SEMI JOIN ${quoteIdent(programs)} s ON s.org_id IS NOT DISTINCT FROM d.org_id AND s.program_id = d.program_id`;
    await this.cx.sql.run(`CREATE TEMP VIEW ${quoteIdent(name)} AS SELECT ${this.castBack('d.')} FROM ${from}${only}`);
  }

  /** The path of part i (to read its programs). */
  partPath(i: number): string {
    return this.parts[i]!;
  }

  private castBack(prefix = ''): string {
    return this.columns
      .map((c) => `CAST(${prefix}${quoteIdent(c.column_name)} AS ${c.data_type}) AS ${quoteIdent(c.column_name)}`)
      .join(', ');
  }

  /** The TEMP view over the parts in order (an empty part first when there is none). */
  async publish(emptySql: string, emptyParams: Record<string, unknown>, name: string = this.name): Promise<void> {
    if (this.parts.length === 0) await this.append(emptySql, emptyParams);
    const files = this.parts.map((p) => quoteLiteral(p)).join(', ');
    await dropTempRelation(this.cx, name);
    await this.cx.sql.run(
      `CREATE TEMP VIEW ${quoteIdent(name)} AS SELECT ${this.castBack()} FROM read_parquet([${files}])`,
    );
  }
}

/**
 * Drops the TEMP table or view `name` if there is one: an earlier run on this connection may have
 * left either (a finalised month's rows are tables, a run's stages views).
 */
export async function dropTempRelation(cx: StoreContext, name: string): Promise<void> {
  const [t] = await cx.sql.query<{ n: bigint }>(TEMP_TABLE_COUNT, { name });
  if (Number(t!.n) > 0) await cx.sql.run(`DROP TABLE ${quoteIdent(name)}`);
  const [v] = await cx.sql.query<{ n: bigint }>(TEMP_VIEW_COUNT, { name });
  if (Number(v!.n) > 0) await cx.sql.run(`DROP VIEW ${quoteIdent(name)}`);
}

/** The TEMP view of one chunk of the detail that a per-chunk query reads. */
export const DAILY_CHUNK_VIEW = 'rpt_daily_chunk';

const PART_TABLE = 'rpt_part_programs';
const GROUP_TABLE = 'rpt_group_programs';
/** The programs of a detail part, numbered into groups of $programs_per_part in line order (org_id NULLS FIRST, program_id). */
const PART_PROGRAMS = `CREATE OR REPLACE TEMP TABLE ${quoteIdent(PART_TABLE)} AS
SELECT org_id, program_id, (dense_rank() OVER (ORDER BY org_id NULLS FIRST, program_id) - 1) // $programs_per_part AS grp
FROM (SELECT DISTINCT org_id, program_id FROM read_parquet($path))`;
const PART_GROUPS = `SELECT coalesce(max(grp) + 1, 0) AS n FROM ${quoteIdent(PART_TABLE)}`;
/** The programs of one group (the TEMP table the sub-chunk's view semi-joins). */
const GROUP_PROGRAMS = `CREATE OR REPLACE TEMP TABLE ${quoteIdent(GROUP_TABLE)} AS
SELECT org_id, program_id FROM ${quoteIdent(PART_TABLE)} WHERE grp = $grp`;

/** The report's stages (Store.report.stages). */
export class Stages {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /**
   * Computes rpt_days, the report tables and rpt_daily for the period; the intermediate stages are
   * dropped. The large stages (the frameworks' daily usage, the detail) are Parquet files in
   * scratchDir, which the caller removes after the run.
   */
  async materialiseReports(
    params: StageParams,
    scratchDir: string,
    log: Logger = silentLogger,
    programsPerChunk: number = PROGRAMS_PER_CHUNK,
  ): Promise<ParquetStage> {
    const frameworkMetrics = [...V2_FRAMEWORK_METRICS];
    await this.cx.sql.run(UNORDERED);
    await materialise(this.cx, DAYS_UNSORTED_TABLE, 'src/store/report/sql/stage_days.sql', { ...params }, log);
    await materialise(
      this.cx,
      CHUNKS_TABLE,
      'src/store/report/sql/stage_chunks.sql',
      { programs_per_chunk: BigInt(programsPerChunk) },
      log,
    );
    // rpt_days and rpt_framework_days into Parquet one part per chunk, in chunk order: a chunk's query
    // reads its row groups only, and no query sorts or aggregates the month's rows by chunk.
    let t0 = performance.now();
    const bounds = await this.cx.sql.query<{ chunk: bigint; programs: string[] }>(CHUNK_PROGRAMS);
    const daysSql = stageSql('src/store/report/sql/stage_days_by_chunk.sql');
    const days = await ParquetStage.open(this.cx, DAYS_TABLE, scratchDir, daysSql, { chunk: NO_CHUNK });
    for (const b of bounds) await days.append(daysSql, { chunk: BigInt(b.chunk) });
    await days.publish(daysSql, { chunk: NO_CHUNK });
    await this.cx.sql.run(`DROP TABLE ${quoteIdent(DAYS_UNSORTED_TABLE)}`);
    log.debug('report stage', { table: DAYS_TABLE, ms: Math.round(performance.now() - t0) });
    // The frameworks' daily usage one chunk at a time, one part per chunk (in chunk order).
    const fdSql = stageSql('src/store/report/sql/stage_framework_days.sql');
    const fdParams = { ...params, framework_metrics: frameworkMetrics };
    const fdNone = { ...fdParams, chunk: NO_CHUNK, programs: [] };
    const fd = await ParquetStage.open(this.cx, FRAMEWORK_DAYS_TABLE, scratchDir, fdSql, fdNone);
    t0 = performance.now();
    for (const b of bounds) {
      await fd.append(fdSql, { ...fdParams, chunk: BigInt(b.chunk), programs: b.programs });
    }
    await fd.publish(fdSql, fdNone);
    log.debug('report stage', {
      table: FRAMEWORK_DAYS_TABLE,
      parts: fd.partCount,
      ms: Math.round(performance.now() - t0),
    });
    await this.cx.sql.run(ORDERED);
    for (const name of reportsOf('days'))
      await materialise(this.cx, reportTable(name), REPORT_STAGES[name].sqlPath, undefined, log);

    const chunk = stageSql('src/store/report/sql/daily_chunk.sql');
    const none = { chunk: NO_CHUNK, framework_metrics: frameworkMetrics };
    const daily = await ParquetStage.open(this.cx, DAILY_TABLE, scratchDir, chunk, none);
    const [{ n } = { n: 0n }] = await this.cx.sql.query<{ n: bigint | number }>(CHUNK_COUNT);
    for (let i = 0n; i < BigInt(n); i++) {
      t0 = performance.now();
      await daily.append(chunk, { chunk: i, framework_metrics: frameworkMetrics });
      log.debug('report stage', { table: DAILY_TABLE, chunk: Number(i), ms: Math.round(performance.now() - t0) });
    }
    await daily.publish(chunk, none);
    for (const v of [FRAMEWORK_DAYS_TABLE, DAYS_TABLE]) await this.cx.sql.run(`DROP VIEW ${quoteIdent(v)}`);
    await this.cx.sql.run(`DROP TABLE ${quoteIdent(CHUNKS_TABLE)}`);

    for (const name of reportsOf('chunk')) {
      t0 = performance.now();
      const sql = stageSql(REPORT_STAGES[name].sqlPath);
      await this.chunkwise(daily, reportTable(name), scratchDir, sql, {});
      log.debug('report stage', { table: reportTable(name), ms: Math.round(performance.now() - t0) });
    }
    return daily;
  }

  /**
   * Runs `sql` (which reads rpt_daily_chunk and numbers its lines from $line_offset) once per chunk of
   * the detail, in order, into Parquet parts published as a TEMP view `name` (and returns them): the
   * lines of every chunk numbered on from the chunks before, with no query over all the detail. With
   * `programsPerPart`, once per group of that many programs of each chunk, in line order (the reports
   * are numbered program first, so the rows are the same): a FOCUS chunk's sort of wide rows is what
   * kept the process far above DuckDB's limit (ARCHITECTURE.md, "Memory").
   */
  async chunkwise(
    daily: ParquetStage,
    name: ReportTable,
    scratchDir: string,
    sql: string,
    params: Record<string, unknown>,
    publish = true,
    programsPerPart?: number,
  ): Promise<ParquetStage> {
    await daily.publishPart(0, DAILY_CHUNK_VIEW);
    const stage = await ParquetStage.open(this.cx, name, scratchDir, sql, { ...params, line_offset: 0n });
    let offset = 0n;
    const append = async () => {
      await stage.append(sql, { ...params, line_offset: offset });
      offset += BigInt(stage.partRows(stage.partCount - 1));
    };
    for (let i = 0; i < daily.partCount; i++) {
      if (programsPerPart === undefined) {
        await daily.publishPart(i, DAILY_CHUNK_VIEW);
        await append();
        continue;
      }
      await this.cx.sql.run(PART_PROGRAMS, { path: daily.partPath(i), programs_per_part: BigInt(programsPerPart) });
      const [{ n } = { n: 0n }] = await this.cx.sql.query<{ n: bigint | number }>(PART_GROUPS);
      if (BigInt(n) === 0n) {
        await daily.publishPart(i, DAILY_CHUNK_VIEW);
        await append();
      }
      for (let g = 0n; g < BigInt(n); g++) {
        await this.cx.sql.run(GROUP_PROGRAMS, { grp: g });
        // The view is bound when created, so after its programs' table exists.
        if (g === 0n) await daily.publishPart(i, DAILY_CHUNK_VIEW, GROUP_TABLE);
        await append();
      }
    }
    await dropTempRelation(this.cx, DAILY_CHUNK_VIEW);
    for (const t of [PART_TABLE, GROUP_TABLE]) await dropTempRelation(this.cx, t);
    if (publish) await stage.publish(sql, { ...params, line_offset: 0n });
    return stage;
  }

  /** Drops the TEMP table or view `name` if there is one (dropTempRelation). */
  async dropTempRelation(name: ReportTable): Promise<void> {
    await dropTempRelation(this.cx, name);
  }
}
