// The examples at the bench's clock (bench/growth.ts, bench/growthChild.ts).
/** An example's text with now() at the bench's clock. The examples read the wall clock, and the bench's
 *  history ends at its own (NOW0 and the rounds' hours after it): at the wall clock their windows would
 *  lie weeks past the data, and an empty window is answered by a table's zone maps but not by a view over
 *  Parquet files, which opens each file's footer to learn it. */
export const atClock = (sql: string, now: number): string =>
  sql.replaceAll('now()', `TIMESTAMPTZ '${new Date(now).toISOString()}'`);
