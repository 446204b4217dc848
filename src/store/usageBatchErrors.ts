// What a usage batch refuses with: each leaves the database unchanged and says what is wrong.
import type { Offence } from '../page/firstOffence.js';

/** A batch was refused; the database is unchanged. */
export class UsageBatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageBatchError';
  }
}

/** A page's content is not what the API documents: the scope is refused, nothing of it written. */
export class PageContentError extends UsageBatchError {
  constructor(readonly offence: Offence) {
    super(`${offence.path}: ${offence.problem}`);
    this.name = 'PageContentError';
  }
}

/** The answer would delete more of the window than allowed: held, nothing written. */
export class DeletionHeldError extends UsageBatchError {
  constructor(
    readonly unseen: number,
    readonly existing: number,
    readonly share: number,
  ) {
    super(
      `the answer would delete ${unseen} of the window's ${existing} stored rows (${Math.round((unseen / existing) * 100)}%, ` +
        `more than the ${Math.round(share * 100)}% allowed by collect.max_deletion_share): held, nothing was changed. ` +
        `If the usage really is gone, re-run with --accept-deletions.`,
    );
    this.name = 'DeletionHeldError';
  }
}
