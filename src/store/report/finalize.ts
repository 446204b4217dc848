// Finalisation of every file of a month, not only FOCUS (ARCHITECTURE.md, "Data path of `report`"):
// `report --finalize` records the rows behind each file written (the report tables and their detail)
// with each file's name, rows and sha256. A later export of the month writes that finalised content
// unchanged and adds a corrections section (a workbook sheet, corrections.parquet, a manifest entry)
// listing what changed since, with amounts: never a silent rewrite of an invoiced month.
import { MARK_FINALIZATION_DIRTY_SQL } from '../analystParts.js';
import type { StoreContext } from '../facade/context.js';
import { quoteIdent, readSql } from '../sql.js';
import { materialiseSql } from './stages.js';

/** The run's TEMP tables whose finalised content later exports of the month keep. */
export const FINALIZED_TABLES = [
  'rpt_program_spend',
  'rpt_framework_spend',
  'rpt_snapshot_storage',
  'rpt_transfer',
  'rpt_daily',
] as const;
/** The TEMP table of the corrections since finalisation (src/store/report/sql/corrections.sql). */
export const CORRECTIONS_TABLE = 'rpt_corrections';

const storeTable = (t: string) => `report_finalized_${t.replace(/^rpt_/, '')}`;

const TABLE_EXISTS = "SELECT count(*) AS n FROM duckdb_tables() WHERE table_name = $name AND database_name <> 'temp'";
const LATEST =
  'SELECT finalization_id FROM report_finalized_files WHERE month = $month ORDER BY finalization_id DESC LIMIT 1';
const TEMP_VIEW_COUNT = "SELECT count(*) AS n FROM duckdb_views() WHERE database_name = 'temp' AND view_name = $name";
const INSERT_FILE = 'INSERT INTO report_finalized_files VALUES ($finalization_id, $month, $name, $n_rows, $sha256)';
const FILES_OF =
  'SELECT name, n_rows, sha256 FROM report_finalized_files WHERE finalization_id = $finalization_id ORDER BY name';

export interface FinalizedState {
  finalizationId: string;
  files: { name: string; rows: number; sha256: string }[];
}

/** A month's finalised report files and their corrections (Store.report.finalized). */
export class Finalized {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** The month's latest finalisation of its files, or null. */
  async finalizedState(month: string | null): Promise<FinalizedState | null> {
    if (month === null) return null;
    const [row] = await this.cx.sql.query<{ finalization_id: string }>(LATEST, { month });
    if (!row) return null;
    const files = (
      await this.cx.sql.query<{ name: string; n_rows: bigint; sha256: string }>(FILES_OF, {
        finalization_id: row.finalization_id,
      })
    ).map((f) => ({ name: f.name, rows: Number(f.n_rows), sha256: f.sha256 }));
    return { finalizationId: row.finalization_id, files };
  }

  /**
   * Computes CORRECTIONS_TABLE (current program_spend lines against the finalised ones), then replaces
   * the run's report tables by their finalised content, so every writer writes what was finalised.
   * Returns the number of corrections and their net amount.
   */
  async applyFinalized(state: FinalizedState): Promise<{ rows: number; amount: string }> {
    const corrections = readSql('src/store/report/sql/corrections.sql').trim().replace(/;\s*$/, '');
    await this.cx.sql.run(materialiseSql(CORRECTIONS_TABLE, corrections), { finalization_id: state.finalizationId });
    for (const t of FINALIZED_TABLES) {
      // rpt_daily is a view over the run's Parquet stage (stages.ts): replaced by a table of the finalised rows.
      const [v] = await this.cx.sql.query<{ n: bigint }>(TEMP_VIEW_COUNT, { name: t });
      if (Number(v!.n) > 0) await this.cx.sql.run(`DROP VIEW ${quoteIdent(t)}`);
      await this.cx.sql.run(
        `CREATE OR REPLACE TEMP TABLE ${quoteIdent(t)} AS SELECT * EXCLUDE (finalization_id, month) FROM ${quoteIdent(storeTable(t))} ` +
          'WHERE finalization_id = $finalization_id ORDER BY line_order',
        { finalization_id: state.finalizationId },
      );
      await this.cx.sql.run(`ALTER TABLE ${quoteIdent(t)} DROP COLUMN line_order`);
    }
    const [t] = await this.cx.sql.query<{ n: bigint; amount: string }>(
      `SELECT count(*) AS n, CAST(coalesce(sum(cost_change), 0) AS VARCHAR) AS amount FROM ${quoteIdent(CORRECTIONS_TABLE)}`,
    );
    return { rows: Number(t!.n), amount: t!.amount };
  }

  /**
   * Records the run's report tables and the files written as the month's finalisation (after every
   * file is in place). The lines are the basis of later corrections.
   */
  async recordFinalizedFiles(o: {
    finalizationId: string;
    month: string;
    files: { name: string; rows: number; sha256: string }[];
  }): Promise<void> {
    await this.cx.transaction(async () => {
      for (const t of FINALIZED_TABLES) {
        const target = storeTable(t);
        const [e] = await this.cx.sql.query<{ n: bigint }>(TABLE_EXISTS, { name: target });
        const select =
          `SELECT CAST($finalization_id AS VARCHAR) AS finalization_id, CAST($month AS VARCHAR) AS month, ` +
          `row_number() OVER () AS line_order, * FROM ${quoteIdent(t)}`;
        if (Number(e!.n) === 0)
          await this.cx.sql.run(`CREATE TABLE ${quoteIdent(target)} AS ${select} LIMIT 0`, {
            finalization_id: o.finalizationId,
            month: o.month,
          });
        await this.cx.sql.run(`INSERT INTO ${quoteIdent(target)} BY NAME ${select}`, {
          finalization_id: o.finalizationId,
          month: o.month,
        });
      }
      await this.cx.sql.run(readSql('src/store/report/sql/finalize_lines.sql'), {
        finalization_id: o.finalizationId,
        month: o.month,
      });
      await this.cx.sql.run(MARK_FINALIZATION_DIRTY_SQL, { id: o.finalizationId });
      for (const f of o.files) {
        await this.cx.sql.run(INSERT_FILE, {
          finalization_id: o.finalizationId,
          month: o.month,
          name: f.name,
          n_rows: BigInt(f.rows),
          sha256: f.sha256,
        });
      }
    });
  }
}
