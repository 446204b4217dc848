// The analyst copy compared with the database it was published from.
import { rawSql } from '../../src/store/rawSql.js';
import { quoteIdent, quoteLiteral } from '../../src/store/sql.js';
import type { Store } from '../../src/store/store.js';

const TABLES_SQL = `SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1`;

/** Rows that differ (both ways) between each table of the database (and the views named) and the copy's
 *  table or view of the same name; empty when the copy holds what the database holds. */
export async function copyDifferences(
  store: Store,
  copy: string,
  views: readonly string[] = ['usage_program', 'usage_framework'],
): Promise<Record<string, number>> {
  const sql = rawSql(store);
  await sql.run(`ATTACH ${quoteLiteral(copy)} AS pub (READ_ONLY)`);
  try {
    // analyst_retired's stamps are written after the copy is in place.
    const names = (await sql.query<{ table_name: string }>(TABLES_SQL))
      .map((r) => r.table_name)
      .filter((t) => t !== 'analyst_retired');
    const count = (t: string) => {
      const [mine, theirs] = [quoteIdent(t), `pub.${quoteIdent(t)}`];
      return `SELECT ${quoteLiteral(t)} AS t,
  (SELECT count(*) FROM (SELECT * FROM ${mine} EXCEPT ALL SELECT * FROM ${theirs}))
  + (SELECT count(*) FROM (SELECT * FROM ${theirs} EXCEPT ALL SELECT * FROM ${mine})) AS n`;
    };
    // The tables in one statement (each is a scan), each view on its own (they join).
    const out: Record<string, number> = {};
    for (const q of [names.map(count).join('\nUNION ALL\n'), ...views.map(count)])
      for (const r of await sql.query<{ t: string; n: bigint }>(q)) if (r.n !== 0n) out[r.t] = Number(r.n);
    return out;
  } finally {
    await sql.run('DETACH pub');
  }
}
