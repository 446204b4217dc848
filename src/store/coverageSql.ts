// The coverage rows a batch commit and a recorded failure write (usageBatch.ts, facade/coverage.ts): one per
// (source, granularity, scope, window), and the summary per scope that every write keeps (migration 021,
// coverage_by_scope), in the writer's transaction. Retention (facade/usage.ts) recomputes the scopes it
// changed with rebuildCoverageScopes.
import type { DuckDBConnection } from '@duckdb/node-api';
import { execSql, queryRows } from './connection.js';
import { readSql } from './sql.js';
import type { CoverageRow } from './types.js';

// Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
// $window_end TIMESTAMPTZ. coverage keeps one row per (source, granularity, scope, window): a
// re-collection replaces it. The statuses deleted tell the summary whether a complete row went.
const COVERAGE_DELETE_SAME_SQL = `
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end
RETURNING status;`;

// Before a failed or not-eligible scope is recorded: removes only the earlier unsuccessful rows of the
// same window, so the coverage the data had before (a complete or partial row) stays beside the new
// failure. Parameters: as COVERAGE_DELETE_SAME_SQL.
const COVERAGE_DELETE_SAME_FAILED_SQL = `
DELETE FROM coverage
WHERE source = $source AND granularity = $granularity AND scope = $scope
  AND window_start = $window_start AND window_end = $window_end
  AND status IN ('failed', 'not_eligible')
RETURNING status;`;

// Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, $window_start TIMESTAMPTZ,
// $window_end TIMESTAMPTZ, $status VARCHAR, $rows BIGINT, $run_id VARCHAR, $collected_at TIMESTAMPTZ,
// $detail VARCHAR (NULL unless failed or not_eligible).
const COVERAGE_INSERT_SQL = `
INSERT INTO coverage (source, granularity, scope, window_start, window_end, status, rows, run_id, collected_at, detail)
VALUES ($source, $granularity, $scope, $window_start, $window_end, $status, $rows, $run_id, $collected_at, $detail);`;

// Parameters: $source VARCHAR, $granularity VARCHAR, $scope VARCHAR, each NULL for any. The scopes'
// summaries recomputed from their coverage rows (the macro of migration 021); a scope left with no
// row has none.
const COVERAGE_BY_SCOPE_DROP_SQL = `
DELETE FROM coverage_by_scope
WHERE ($source IS NULL OR source = $source) AND ($granularity IS NULL OR granularity = $granularity)
  AND ($scope IS NULL OR scope = $scope);`;
const COVERAGE_BY_SCOPE_FILL_SQL = `
INSERT INTO coverage_by_scope SELECT * FROM coverage_scope_summary($source, $granularity, $scope);`;

/** Which scopes' summaries to recompute: every one matching the fields given. */
export interface CoverageScopes {
  source?: string;
  granularity?: string;
  scope?: string;
}

/** Recomputes the summaries of the matching scopes from their coverage rows (inside the caller's transaction). */
export async function rebuildCoverageScopes(conn: DuckDBConnection, only: CoverageScopes): Promise<void> {
  const params = { source: only.source ?? null, granularity: only.granularity ?? null, scope: only.scope ?? null };
  await execSql(conn, COVERAGE_BY_SCOPE_DROP_SQL, params);
  await execSql(conn, COVERAGE_BY_SCOPE_FILL_SQL, params);
}

/**
 * Writes one coverage row inside the caller's transaction: it replaces the same window's row (a failed or
 * not-eligible row only the window's earlier failures: the data's row stays beside it), and its scope's
 * summary follows, folded in when that is exact (coverage_by_scope_add.sql says when), else recomputed.
 */
export async function writeCoverageRow(conn: DuckDBConnection, c: CoverageRow): Promise<void> {
  const key = {
    source: c.source,
    granularity: c.granularity,
    scope: c.scope,
    window_start: c.windowStart,
    window_end: c.windowEnd,
  };
  const unsuccessful = c.status === 'failed' || c.status === 'not_eligible';
  const deleted = await queryRows<{ status: string }>(
    conn,
    unsuccessful ? COVERAGE_DELETE_SAME_FAILED_SQL : COVERAGE_DELETE_SAME_SQL,
    key,
  );
  const row = { ...key, status: c.status, run_id: c.runId, collected_at: c.collectedAt, detail: c.detail ?? null };
  await execSql(conn, COVERAGE_INSERT_SQL, { ...row, rows: BigInt(c.rows ?? 0) });
  const completeDeleted = deleted.filter((d) => d.status === 'complete').length;
  const folded = await execSql(conn, readSql('src/store/sql/coverage_by_scope_add.sql'), {
    ...row,
    complete_deleted: BigInt(completeDeleted),
  });
  if (folded === 0) await rebuildCoverageScopes(conn, c);
}
