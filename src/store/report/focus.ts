// The FOCUS export's statements (report/focus.ts builds the rows and decides what is recorded): the
// finalised rows of a month, the corrected rows of a finalised month, the totals and block digests of
// the FOCUS table, and recording a finalisation.
import { MARK_FINALIZATION_DIRTY_SQL } from '../analystParts.js';
import type { StoreContext } from '../facade/context.js';
import { quoteIdent, readSql } from '../sql.js';
import { reportTable } from '../../domain/reports.js';
import { dropTempRelation, materialiseSql } from './stages.js';

/** The TEMP tables of a run: the rows computed from current data, and the rows written. */
export const FOCUS_CURRENT_TABLE = 'rpt_focus_current';
export const FOCUS_TABLE = 'rpt_focus';
const FOCUS_STAGING_TABLE = 'rpt_focus_staging';

/** Rows, BilledCost total and last line of the FOCUS table (FOCUS_TABLE, a fixed name). */
const FOCUS_TOTALS = `SELECT count(*) AS n_rows, CAST(coalesce(sum("BilledCost"), 0) AS DECIMAL(18,2)) AS billed, max(line_no) AS last FROM ${quoteIdent(FOCUS_TABLE)}`;

// (focus_digest) Parameters: $lo BIGINT, $hi BIGINT. One block of the FOCUS rows (line_no in
// ($lo, $hi]): its row count and the sha256 of its rows as text in line order. report/focus.ts hashes
// the blocks of 10,000 lines one query at a time, then the block hashes in order, so memory stays
// bounded however many rows there are. What a finalisation records. The table is FOCUS_TABLE.
const FOCUS_DIGEST_SQL = `SELECT count(*) AS n, sha256(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.line_no), '')) AS h
FROM ${quoteIdent(FOCUS_TABLE)} t
WHERE t.line_no > $lo AND t.line_no <= $hi;`;

// (focus_finalize_rows) Parameters: $finalization_id VARCHAR, $month VARCHAR, $after BIGINT. Records
// the rows of FOCUS_TABLE after line $after (all rows the first time; the new correction rows later),
// column for column by name.
const FOCUS_FINALIZE_ROWS_SQL = `INSERT INTO report_focus_finalized BY NAME
SELECT $finalization_id AS finalization_id, $month AS month, line_no AS row_no, * EXCLUDE (line_no)
FROM ${quoteIdent(FOCUS_TABLE)} WHERE line_no > $after ORDER BY line_no;`;

// (focus_unpriced) Parameters: none. The program_spend lines with no rate (left out of the FOCUS file:
// FOCUS costs must not be null, and no price is invented), by plan and reason, from the run's
// program_spend (the current lines, before a finalised month's tables replace them).
const FOCUS_UNPRICED_SQL = `SELECT period_plan AS plan, note AS reason, CAST(count(*) AS BIGINT) AS lines
FROM ${quoteIdent(reportTable('program_spend'))} WHERE NOT priced GROUP BY ALL ORDER BY plan, reason;`;

/** The FOCUS rows' SQL (one chunk of the detail, numbered on from $line_offset; stages.ts chunkwise). */
export function focusRowsSql(): string {
  return readSql('src/store/report/sql/focus.sql').trim().replace(/;\s*$/, '');
}

export interface FocusFinalizationRow {
  finalization_id: string;
  seq: number;
  finalized_at: Date;
  n_rows: bigint;
  billed_total: string;
  rows_sha256: string;
}

/** The FOCUS export's tables and finalisations (Store.report.focus). */
export class FocusData {
  /** @internal Created by the Store. */
  constructor(private readonly cx: StoreContext) {}

  /** The program_spend lines with no rate, by plan and reason (FOCUS_UNPRICED_SQL). */
  async focusUnpriced(): Promise<{ plan: string; reason: string; lines: number }[]> {
    const rows = await this.cx.sql.query<{ plan: string; reason: string; lines: bigint }>(FOCUS_UNPRICED_SQL);
    return rows.map((r) => ({ plan: r.plan, reason: r.reason, lines: Number(r.lines) }));
  }

  /** The month's FOCUS finalisations, in order. */
  async focusFinalizations(month: string): Promise<FocusFinalizationRow[]> {
    return this.cx.sql.query<FocusFinalizationRow>(readSql('src/store/report/sql/focus_finalizations.sql'), { month });
  }

  /**
   * A finalised month: FOCUS_TABLE becomes its recorded rows, then the corrections against the current
   * rows (the view FOCUS_CURRENT_TABLE), with the columns in the order of the current rows.
   */
  async replaceFocusWithCorrected(month: string): Promise<void> {
    const sql = this.cx.sql;
    await dropTempRelation(this.cx, FOCUS_STAGING_TABLE);
    await sql.run(
      materialiseSql(
        FOCUS_STAGING_TABLE,
        readSql('src/store/report/sql/focus_corrected.sql').trim().replace(/;\s*$/, ''),
      ),
      { month },
    );
    // The columns in the order of the current rows, whatever order the finalised table holds them in,
    // so the file of a finalised month has the same schema as before.
    const cols = (
      await sql.query<{ column_name: string }>(readSql('src/store/report/sql/table_columns.sql'), {
        table: FOCUS_CURRENT_TABLE,
      })
    ).map((c) => quoteIdent(c.column_name));
    // The staging table is in line order; insertion order is kept (report/run.ts), so no second sort.
    await dropTempRelation(this.cx, FOCUS_TABLE);
    await sql.run(
      `CREATE TEMP TABLE ${quoteIdent(FOCUS_TABLE)} AS SELECT ${cols.join(', ')} FROM ${quoteIdent(FOCUS_STAGING_TABLE)}`,
    );
    await sql.run(`DROP TABLE ${quoteIdent(FOCUS_STAGING_TABLE)}`);
  }

  /** Rows, BilledCost total and last line of FOCUS_TABLE. */
  async focusTotals(): Promise<{ n_rows: bigint; billed: string; last: bigint | null }> {
    const [all] = await this.cx.sql.query<{ n_rows: bigint; billed: string; last: bigint | null }>(FOCUS_TOTALS);
    return all!;
  }

  /** One block of FOCUS_TABLE's lines in ($lo, $hi]: its row count and sha256 (FOCUS_DIGEST_SQL). */
  async focusDigestBlock(lo: number, hi: number): Promise<{ n: bigint; h: string }> {
    const [b] = await this.cx.sql.query<{ n: bigint; h: string }>(FOCUS_DIGEST_SQL, { lo: BigInt(lo), hi: BigInt(hi) });
    return b!;
  }

  /** Records a finalisation and the rows of FOCUS_TABLE after line `after`, in one transaction. */
  async recordFocusFinalization(f: {
    finalizationId: string;
    month: string;
    seq: number;
    finalizedAt: Date;
    revision: string;
    rows: number;
    billedTotal: string;
    rowsSha256: string;
    after: number;
  }): Promise<void> {
    const sql = this.cx.sql;
    await this.cx.transaction(async () => {
      await sql.run(readSql('src/store/report/sql/focus_finalize_record.sql'), {
        finalization_id: f.finalizationId,
        month: f.month,
        seq: f.seq,
        finalized_at: f.finalizedAt,
        revision: f.revision,
        n_rows: BigInt(f.rows),
        billed_total: f.billedTotal,
        rows_sha256: f.rowsSha256,
      });
      await sql.run(FOCUS_FINALIZE_ROWS_SQL, {
        finalization_id: f.finalizationId,
        month: f.month,
        after: BigInt(f.after),
      });
      await sql.run(MARK_FINALIZATION_DIRTY_SQL, { id: f.finalizationId });
    });
  }
}
