// `usage-pipeline compact`: the database rewritten in the store's storage format, its free space
// returned (compactStore(), src/app/compact.ts). Input is checked before anything is written.
import { compactSettings, compactStore, type CompactResult } from '../app/compact.js';
import { commandContext, type CommonOptions } from '../app/context.js';

/** The checks, before the lock is taken. */
export function prepareCompactCommand(opts: CommonOptions): void {
  compactSettings(commandContext(opts));
}

export async function compactCommand(opts: CommonOptions, signal?: AbortSignal): Promise<CompactResult> {
  return compactStore(commandContext(opts), signal);
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;

export function formatCompact(r: CompactResult): string {
  return (
    `rewrote ${r.db} (${r.tables} tables): ${mb(r.bytesBefore)} -> ${mb(r.bytesAfter)}, ` +
    `storage format ${r.formatBefore} -> ${r.formatAfter}.`
  );
}
