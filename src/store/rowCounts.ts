// The bucket tables' row counts (migration 020), changed by every write of a bucket table in its own
// transaction, so that `status` reads two rows instead of counting the history.

// Parameters: $table_name VARCHAR, $delta BIGINT (rows inserted less rows deleted).
export const ROW_COUNT_ADD_SQL = `
UPDATE usage_row_counts SET row_count = row_count + $delta WHERE table_name = $table_name;`;

// Parameters: none.
export const ROW_COUNTS_SQL = `
SELECT table_name, row_count FROM usage_row_counts;`;
