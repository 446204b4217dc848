// What opening or reading the database can fail with, each saying what is wrong and what to do.
import { existsSync } from 'node:fs';

/** The database file does not exist and the command only reads what collect wrote. */
export class StoreMissingError extends Error {
  constructor(readonly path: string) {
    super(
      `The database ${path} does not exist yet: check --db (or store.db, USAGE_DB), or run \`usage-pipeline collect\` first.`,
    );
    this.name = 'StoreMissingError';
  }
}

/** DuckDB's out-of-memory error (a query, a pin or a commit beyond memory_limit). */
export function isOutOfMemory(err: unknown): boolean {
  return /Out of Memory Error|could not allocate block|failed to pin block/i.test(
    err instanceof Error ? err.message : String(err),
  );
}

/** Whether an error is DuckDB failing to read the file itself (truncated, bad checksum), not a query's fault. */
export function isStoreCorruption(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return (
    err instanceof StoreCorruptError ||
    /Could not read enough bytes|checksum|Corrupt database|not a valid DuckDB database/i.test(message)
  );
}

/** The file is not a database DuckDB can open (truncated, corrupt, or another kind of file). */
export class StoreCorruptError extends Error {
  constructor(
    readonly path: string,
    cause: string,
  ) {
    // The analyst copy and its part files hold the database as of the last published run (publish.ts):
    // the nearest good state when the collector's own file is damaged.
    const copy = analystCopyName(path);
    const restore = existsSync(copy)
      ? `run \`usage-pipeline restore\`: it rebuilds the database from the analyst copy ${copy} (the database as of the last published run); ` +
        'then `usage-pipeline collect` collects again whatever the copy does not hold'
      : 'restore it from a backup, or run `usage-pipeline collect` into a new file';
    super(
      `the database ${path} cannot be read: ${cause}. It was not changed. Move it aside (and its .wal file, if any), then ${restore}.`,
    );
    this.name = 'StoreCorruptError';
  }
}

/** The database file is held by another process (or, for a writer, by another store in this process). */
export class StoreLockedError extends Error {
  constructor(
    readonly path: string,
    readonly waitedMs: number,
    detail: string,
  ) {
    super(
      `The database ${path} is in use by another process${detail ? ` (${detail})` : ''}; waited ${Math.round(waitedMs / 1000)} s. ` +
        `Wait for that process to finish (a running collect or report) and try again, or close the analyst session ` +
        `that has this file open: analysts should open the published copy ${analystCopyName(path)} instead, which ` +
        `never blocks collection.`,
    );
    this.name = 'StoreLockedError';
  }
}

// Kept here (and re-exported by publish.ts) so that the lock message can name the analyst copy.
export function analystCopyName(dbPath: string): string {
  const m = /^(.*?)(\.duckdb|\.ddb|\.db)?$/i.exec(dbPath);
  return `${m?.[1] ?? dbPath}.analyst.duckdb`;
}
