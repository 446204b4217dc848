// The in-process registry of open database files (one writer or any readers per file).

// DuckDB's file lock is a POSIX lock, which does not exclude a second open in the same process; this
// registry does, so that two stores in one process never write one file.
const inProcess = new Map<string, { writers: number; readers: number }>();

export function takeInProcess(path: string, readOnly: boolean): boolean {
  if (path === IN_MEMORY) return true; // every in-memory instance is its own database
  const e = inProcess.get(path) ?? { writers: 0, readers: 0 };
  if (e.writers > 0 || (!readOnly && e.readers > 0)) return false;
  if (readOnly) e.readers++;
  else e.writers++;
  inProcess.set(path, e);
  return true;
}

export function releaseInProcess(path: string, readOnly: boolean): void {
  if (path === IN_MEMORY) return;
  const e = inProcess.get(path);
  if (!e) return;
  if (readOnly) e.readers--;
  else e.writers--;
  if (e.writers <= 0 && e.readers <= 0) inProcess.delete(path);
}

export class InProcessConflict extends Error {
  constructor() {
    super('Conflicting lock: the file is open in this process');
  }
}

/** DuckDB's name for a database that lives in memory only: no file, no lock, nothing to resolve. */
export const IN_MEMORY = ':memory:';
