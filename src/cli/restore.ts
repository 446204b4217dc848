// `usage-pipeline restore [--from COPY]`: the database rebuilt from the analyst copy (restoreDatabase(),
// src/app/restore.ts). Input is checked before anything is written.
import { restoreDatabase, restoreSettings, type RestoreResult } from '../app/restore.js';
import { commandContext, type CommonOptions } from '../app/context.js';

export interface RestoreCommandOptions extends CommonOptions {
  from?: string;
}

/** The checks, before the lock is taken. */
export function prepareRestoreCommand(opts: RestoreCommandOptions): void {
  restoreSettings(commandContext(opts), opts.from);
}

export async function restoreCommand(opts: RestoreCommandOptions): Promise<RestoreResult> {
  return restoreDatabase(commandContext(opts), opts.from);
}

export function formatRestore(r: RestoreResult): string {
  return (
    `restored ${r.db} from ${r.from} (${r.tables} tables): the database as of that copy's publish.\n` +
    'Run `usage-pipeline collect` to collect again whatever it does not hold.'
  );
}
